"""Seconds to generate one video clip (data/video_speed.toml: the model makers' READMEs), for
"CogVideoX-5B 生成一段6秒视频要多久, 4090". Each row of the model is moved to the asked card
by the cards' measured training-speed ratio (advisor/throughput.py `relative_of`, Lambda's
one-stack benchmark: a video DiT over tens of thousands of tokens is compute bound, as
training is), and a clip of other frames, size or steps in proportion to frames x pixels x
steps; the slowest row so moved is kept, as advisor/throughput.py keeps it. A model without
a row gets no time (none is claimed).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.throughput import relative_of

DATA_FILE = Path(__file__).resolve().parent / "data" / "video_speed.toml"


class Clip(NamedTuple):
    """A clip to time: frames, width, height, denoising steps (None: the source's), clips."""

    frames: int
    width: int
    height: int
    steps: int | None = None
    clips: int = 1


class ClipTime(NamedTuple):
    seconds: float  # all the clips asked, on one card
    source_gpu: str  # the measured row kept: its card's name and its seconds
    source_seconds: float
    scaled: bool  # the clip differs from the one measured (frames, size or steps)
    source: str


@cache
def table() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def clip_seconds(model_id: str | None, gpu: GpuSpec, clip: Clip) -> ClipTime | None:
    """The slowest of the model's measured rows moved to `gpu` and to `clip`; None without a
    row or for a card the catalog lacks."""
    gpus = catalog.gpus()
    if gpu.id not in gpus:
        return None
    best: ClipTime | None = None
    for row in table()["row"]:
        if row["model"] != model_id or row["gpu"] not in gpus:
            continue
        steps = clip.steps or row["steps"]
        work = clip.frames * clip.width * clip.height * steps
        measured = row["frames"] * row["width"] * row["height"] * row["steps"]
        cards = relative_of(row["gpu"]) / relative_of(gpu.id)
        seconds = row["seconds"] * cards * work / measured * max(clip.clips, 1)
        if best is None or seconds > best.seconds:
            best = ClipTime(
                seconds=round(seconds),
                source_gpu=gpus[row["gpu"]].name,
                source_seconds=row["seconds"],
                scaled=work != measured,
                source=row["source"],
            )
    return best


class ClipLength(NamedTuple):
    frames: int
    seconds: float  # as asked, or the longest the model generates
    fps: int
    capped: bool  # longer than the model generates: its longest


def clip_frames(model_id: str | None, seconds: float) -> ClipLength | None:
    """A clip of `seconds` in this model's frames (data/video_speed.toml [clip]): the first
    frame plus fps per second; None for a model whose frame rate is not listed."""
    clip = table().get("clip", {}).get(model_id or "")
    if clip is None or seconds <= 0:
        return None
    longest = clip.get("max_seconds")
    capped = longest is not None and seconds > longest
    used = float(longest) if capped else seconds
    return ClipLength(round(used * clip["fps"]) + 1, used, clip["fps"], capped)
