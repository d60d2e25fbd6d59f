"""Speech recognition speed as a real-time factor: how many seconds of audio one card
transcribes per second (data/audio_speed.toml: the faster-whisper README benchmark), for
"whisper large-v3 on a T4, batched". Tokens per second mean little for transcription; hours
of audio per hour is what people plan by.

A card is scaled from the reference card (RTX 3070 Ti) by its memory bandwidth, batched by
the smaller of bandwidth and compute ratios, and never past the reference figure (a faster
card is "at least" it). A batch of 8 or more reads the batched figure (measured at 8; a
larger batch is not taken to be faster), a smaller one the one-at-a-time figure.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from advisor.catalog import GpuSpec

DATA_FILE = Path(__file__).resolve().parent / "data" / "audio_speed.toml"
# the batch the reference measured batched
MEASURED_BATCH = 8


class AudioSpeed(NamedTuple):
    realtime_x: float  # seconds of audio per second of work
    at_least: bool  # a card faster than the reference: its figure is a floor
    runtime: str  # faster_whisper | transformers | openai_whisper
    batched: bool
    basis: str  # published (the reference card) | scaled_card


@cache
def table() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def default_batch() -> int:
    return int(table()["default_batch"])


def _runtime_key(runtime: str | None, framework: str | None) -> str:
    name = (framework or runtime or "").lower().replace("-", "_")
    if "faster" in name or "ctranslate" in name:
        return "faster_whisper"
    if name in ("openai_whisper", "whisper"):
        return "openai_whisper"
    return "transformers"


def realtime_factor(
    model_id: str | None,
    gpu: GpuSpec,
    batch: int,
    runtime: str | None = None,
    framework: str | None = None,
    weight_bytes: float = 2.0,
) -> AudioSpeed | None:
    """Seconds of audio per second on one `gpu`, or None for a model no source measured.
    `weight_bytes`: what each decoded token reads per weight; the reference ran fp16 (2).
    Wider weights (fp32: CTranslate2 on a Pascal card) read more per token and take that
    much longer one at a time; narrower ones are not taken to be faster (the reference's
    int8 rows are no faster than its fp16 ones). openai-whisper's figure was measured with
    its fp32 model already."""
    ref = table()["reference"]
    if model_id not in ref["models"] or gpu.memory_bandwidth_gbs <= 0:
        return None
    key = _runtime_key(runtime, framework)
    seconds = ref["seconds"]
    batched = batch >= MEASURED_BATCH and key != "openai_whisper"
    if batched:
        taken = seconds["faster_whisper_batched"]
        if key == "transformers":
            taken *= seconds["transformers"] / seconds["faster_whisper"]
    else:
        taken = seconds[key]
    bandwidth = gpu.memory_bandwidth_gbs / ref["memory_bandwidth_gbs"]
    ratio = min(bandwidth, gpu.dense_tflops / ref["dense_tflops"]) if batched else bandwidth
    at_least = ratio > 1
    x = ref["audio_s"] / taken * min(ratio, 1.0)
    if not batched and key != "openai_whisper":  # its fp32 model is what it measured
        x *= min(1.0, ref["weight_bytes"] / weight_bytes)
    basis = "published" if gpu.name == ref["gpu"] else "scaled_card"
    return AudioSpeed(round(x, 1), at_least, key, batched, basis)
