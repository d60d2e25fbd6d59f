"""SAM 2 / 2.1 video segmentation sized from the video predictor's own state
(facebookresearch/sam2 at 2b90b9f, read 2026-12-08; data/models/sam2.toml): init_state loads
every frame to the GPU at 1024x1024 in fp32 unless offload_video_to_cpu, and each tracked
frame keeps its memory features (bf16), low-resolution mask logits and object pointer
(fp32) unless offload_state_to_cpu, so a clip's figure grows with its frames."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query

LARGE = "sam2.1-hiera-large"


def test_the_state_per_frame_is_the_predictors_tensors():
    spec = catalog.find_model(LARGE)
    assert spec is not None and spec.video_state is not None
    s = spec.video_state
    # load_video_frames: torch.zeros(num_frames, 3, image_size, image_size, float32)
    assert s.frame_bytes == 3 * 1024 * 1024 * 4
    # maskmem_features [1, 64, 64, 64] bf16 + pred_masks [1, 1, 256, 256] fp32 + obj_ptr [1, 256] fp32
    assert s.tracked_frame_bytes == 64 * 64 * 64 * 2 + 256 * 256 * 4 + 256 * 4


def _video(frames: int):
    r = estimate(Workload(model=LARGE, mode="inference", video_frames=frames))
    assert r.estimate is not None
    return r


def test_a_clip_grows_with_its_frames():
    short, long = _video(100), _video(300)
    b = long.estimate.breakdown
    assert b["video_frames"] == 300 * 3 * 1024 * 1024 * 4
    assert b["memory_bank"] == 300 * 787_456
    assert long.estimate.total_bytes > short.estimate.total_bytes
    said = {(a.field, a.value) for a in long.assumed}
    assert ("video_state_offload", "offload_video_to_cpu=False, offload_state_to_cpu=False") in said


def test_an_image_question_has_no_video_state():
    r = estimate(Workload(model=LARGE, mode="inference"))
    assert r.estimate is not None
    assert "video_frames" not in r.estimate.breakdown
    assert "memory_bank" not in r.estimate.breakdown


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("sam2.1 视频分割 300帧 2060 12g", "zh"),
        ("sam2.1 hiera large video segmentation, 300 frames, on a 12gb rtx 2060", "en"),
    ],
)
def test_a_question_with_a_clip_length_gets_a_figure(line: str, lang: str) -> None:
    parsed = parse_query(line)
    assert parsed.ok and parsed.workload is not None
    w = parsed.workload
    assert w.model == LARGE and w.video_frames == 300 and w.mode.value == "inference"
    r = estimate(w)
    assert r.estimate is not None and "video_frames" in r.estimate.breakdown
    assert w.batch_size in (None, 1)


def _note_codes(line: str) -> set[str]:
    from advisor.pitfalls.model import video_state_unsized

    parsed = parse_query(line)
    assert parsed.ok and parsed.workload is not None
    return {p.code for p in video_state_unsized(estimate(parsed.workload))}


def test_without_a_clip_length_the_answer_says_what_a_video_adds() -> None:
    # 3 x 1024^2 x 4 B = 12 MiB a frame; 787,456 B = 769 KiB a tracked frame and object
    assert _note_codes("sam2.1 hiera large video segmentation on a 12gb rtx 2060") == {
        "video_state_unsized"
    }
    assert _note_codes("sam2.1 视频分割 300帧 2060 12g") == set()
    from advisor.pitfalls.model import video_state_unsized

    note = video_state_unsized(estimate(Workload(model=LARGE, mode="inference")))[0]
    assert note.params == {"frame_mib": "12", "size": "1024", "tracked_kib": "769"}
