"""Published training throughput of vision models (data/throughput.toml): images per second
per card, for "how long does training take" (advisor/recommend/speed.py turns it into
hours: dataset x epochs / (images/s x cards)).

A card the table has no row for is scaled from the model's rows by the smaller of the two
cards' 16-bit compute and memory bandwidth ratios (never past the fastest card measured),
and the slowest of those scalings is kept: a time that comes out too short is the costly
error. A model without rows is scaled
from a `like` model by published forward GFLOPs. Larger images than the source ran are
slower by the pixel count; smaller ones are not taken to be faster (data loading and
kernel launches dominate small images), so the time is then an upper bound.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from advisor import catalog
from advisor.catalog import GpuSpec

DATA_FILE = Path(__file__).resolve().parent / "data" / "throughput.toml"


class Throughput(NamedTuple):
    images_per_s: float  # per card
    basis: str  # published | scaled_card | scaled_model
    source: str


@cache
def table() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def multi_card_efficiency() -> float:
    return table()["scaling"]["multi_card_efficiency"]


# The model measured on the most cards: two cards that both have its row are compared by
# it (measured), not by their specifications.
REFERENCE_MODEL = "resnet50"


def _card_ratio(gpu: GpuSpec, ref: GpuSpec) -> float:
    """How much faster `gpu` trains than `ref`: measured on the reference model where both
    have a row, else the smaller of the compute and the bandwidth ratios."""
    measured = {
        r["gpu"]: r["images_per_s"] for r in table()["row"] if r["model"] == REFERENCE_MODEL
    }
    if gpu.id in measured and ref.id in measured:
        return measured[gpu.id] / measured[ref.id]
    compute = gpu.dense_tflops / ref.dense_tflops if ref.dense_tflops else 0.0
    bandwidth = gpu.memory_bandwidth_gbs / ref.memory_bandwidth_gbs
    # No card is taken to train faster than the fastest one measured: past it the input
    # pipeline (JPEG decoding, augmentation) and the small kernels set the pace, which no
    # source here measured.
    fastest = max(measured.values())
    cap = fastest / measured.get(ref.id, min(measured.values()))
    return min(compute, bandwidth, cap)


def images_per_s(model_id: str | None, gpu: GpuSpec, input_px: int = 0) -> Throughput | None:
    """Training images per second per card for this model at `input_px` (0: the source's),
    or None where nothing published covers the model (or the card is known only by its
    memory size)."""
    if model_id is None or gpu.memory_bandwidth_gbs <= 0 or gpu.id not in catalog.gpus():
        return None
    return _images_per_s(model_id, gpu.id, input_px)


@cache
def _images_per_s(model_id: str, gpu_id: str, input_px: int) -> Throughput | None:
    gpu = catalog.gpus()[gpu_id]
    rows = [r for r in table()["row"] if r["model"] == model_id]
    factor, basis, note = 1.0, "published", ""
    if not rows:
        like = next((x for x in table().get("like", []) if x["model"] == model_id), None)
        if like is None:
            return None
        rows = [r for r in table()["row"] if r["model"] == like["like"]]
        factor = like["like_gflops"] / like["gflops"]
        basis, note = "scaled_model", f"; scaled from {like['like']} by GFLOPs ({like['source']})"
    gpus = catalog.gpus()
    best: tuple[float, str, str] | None = None
    for r in rows:
        if r["gpu"] == gpu.id:
            best = (r["images_per_s"], basis, r["source"])
            break
        ref = gpus.get(r["gpu"])
        if ref is None or ref.memory_bandwidth_gbs <= 0:
            continue
        scaled = r["images_per_s"] * _card_ratio(gpu, ref)
        if best is None or scaled < best[0]:
            card_basis = "scaled_card" if basis == "published" else basis
            best = (scaled, card_basis, f"{r['source']}; scaled to {gpu.name} from {ref.name}")
    if best is None:
        return None
    value, how, source = best
    px = rows[0]["input_px"]
    if input_px > px:
        value *= (px / input_px) ** 2
    return Throughput(round(value * factor, 1), how, source + note)
