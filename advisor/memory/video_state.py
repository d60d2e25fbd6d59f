"""A streaming video segmenter's inference state (SAM 2's SAM2VideoPredictor): the clip's
frames and each tracked frame's memory, which grow with the clip's length unless the
predictor's offload switches move them to the CPU (data/models/sam2.toml)."""

from __future__ import annotations

from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload
from advisor.specs import ModelSpec

# init_state's defaults (sam2/sam2_video_predictor.py): both stores on the GPU
OFFLOAD_DEFAULTS = "offload_video_to_cpu=False, offload_state_to_cpu=False"
TRACKED_OBJECTS = 1


def tracking_state(w: Workload, spec: ModelSpec | None, acc: Breakdown) -> int:
    """The frames init_state loads to the GPU and the per-frame outputs propagate_in_video
    keeps there, for a question that names a clip length; 0 otherwise."""
    state = spec.video_state if spec is not None else None
    if state is None or not w.video_frames or w.mode.is_training:
        return 0
    frames = w.video_frames
    acc.assume("video_state_offload", OFFLOAD_DEFAULTS)
    acc.assume("tracked_objects", TRACKED_OBJECTS)
    allocated = acc.add(
        "video_frames",
        frames * state.frame_bytes,
        f"{frames} frames x 3 x {state.image_size}^2 x fp32",
        frames=frames,
        size=state.image_size,
    )
    per_frame = state.tracked_frame_bytes * TRACKED_OBJECTS
    allocated += acc.add(
        "memory_bank",
        frames * per_frame,
        f"{frames} tracked frames x {TRACKED_OBJECTS} object x {per_frame / 1024:.0f} KiB",
        frames=frames,
        objects=TRACKED_OBJECTS,
        kib=round(per_frame / 1024),
    )
    return allocated
