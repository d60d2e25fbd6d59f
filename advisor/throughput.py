"""Published training throughput of vision models (data/throughput.toml): images per second
per card, for "how long does training take" (advisor/recommend/speed.py turns it into
hours: dataset x epochs / (images/s x cards)).

Every row of a model is moved to the asked card by measured relative training speed
(Lambda's one-stack PyTorch benchmark, data/throughput.toml [[relative]]), and the slowest
of the rows so moved is kept, the card's own row included: rows from different stacks
(NVIDIA's DALI-tuned figures, timm's plain PyTorch run) come out on the slowest stack, and
a time that comes out too short is the costly error. A card Lambda did not measure takes
the nearest measured card's figure times the smallest of its spec ratios (never past the
fastest card measured). A model without rows is scaled from a
`like` model by published forward GFLOPs. Larger images than the source ran are slower by
the pixel count; smaller ones are not taken to be faster (data loading and kernel launches
dominate small images), so the time is then an upper bound.
"""

from __future__ import annotations

import math
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


@cache
def relative_speed() -> dict[str, float]:
    """Card -> ResNet-50 AMP training images/s relative to an RTX 3090 of the same Lambda
    snapshot (the newer snapshot first)."""
    out: dict[str, float] = {}
    for snap in table()["relative"]:
        base = snap["resnet50"]["rtx-3090"]
        for gpu_id, rate in snap["resnet50"].items():
            out.setdefault(gpu_id, rate / base)
    return out


@cache
def relative_of(gpu_id: str) -> float:
    """The card's training speed relative to a 3090 (relative_speed; `nearest_relative`
    for a card Lambda did not measure)."""
    return nearest_relative(gpu_id, tuple(relative_speed().items()))


@cache
def diffusion_relative() -> dict[str, float]:
    """Card -> image-generation speed relative to the anchor card (an RTX 3090), measured
    on diffusers' benchmark (data/throughput.toml [diffusion_relative])."""
    d = table()["diffusion_relative"]
    out: dict[str, float] = {}
    for key in ("iterations_per_s", "batch4_iterations_per_s"):
        rates = d[key]
        for gpu_id, rate in rates.items():
            out.setdefault(gpu_id, rate / rates[d["anchor"]])
    return out


def diffusion_anchor() -> str:
    """The card whose FLOPs-based image speed the other cards are moved from."""
    return str(table()["diffusion_relative"]["anchor"])


@cache
def diffusion_speed_of(gpu_id: str) -> float:
    """How much faster than the 3090 this card generates images (1.0 for a card the
    catalog lacks)."""
    if gpu_id not in catalog.gpus():
        return 1.0
    return nearest_relative(gpu_id, tuple(diffusion_relative().items()))


@cache
def nearest_relative(gpu_id: str, measured_items: tuple[tuple[str, float], ...]) -> float:
    """A card's measured relative speed, else the nearest measured card's (by fp32 compute
    and bandwidth, same vendor and segment first) times the smallest of the fp32, the bandwidth and,
    between cards of one segment (whose tensor figures are quoted alike), the 16-bit tensor
    ratio; never past the fastest card measured."""
    measured = dict(measured_items)
    if gpu_id in measured:
        return measured[gpu_id]
    gpus = catalog.gpus()
    gpu = gpus[gpu_id]
    best: tuple[float, float] | None = None  # (distance, guess)
    for ref_id, rel in measured.items():
        ref = gpus.get(ref_id)
        if ref is None or ref.memory_bandwidth_gbs <= 0 or not ref.fp32_tflops:
            continue
        fp32 = (gpu.fp32_tflops or gpu.dense_tflops) / ref.fp32_tflops
        bandwidth = gpu.memory_bandwidth_gbs / ref.memory_bandwidth_gbs
        ratios = [fp32, bandwidth]
        if ref.segment == gpu.segment:
            ratios.append(gpu.dense_tflops / ref.dense_tflops)
        distance = abs(math.log(fp32)) + abs(math.log(bandwidth))
        distance += 0.0 if ref.vendor == gpu.vendor else 10.0
        distance += 0.0 if ref.segment == gpu.segment else 1.0
        if best is None or distance < best[0]:
            best = (distance, rel * min(ratios))
    # Past the fastest card measured the input pipeline (JPEG decoding, augmentation) and
    # the small kernels set the pace, which no source here measured.
    return min(best[1] if best else 1.0, max(measured.values()))


def _card_ratio(gpu: GpuSpec, ref: GpuSpec) -> float:
    """How much faster `gpu` trains than `ref` (advisor/throughput.py relative_speed)."""
    return relative_of(gpu.id) / relative_of(ref.id)


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
            own = (float(r["images_per_s"]), basis, r["source"])
            if best is None or own[0] <= best[0]:
                best = own
            continue
        ref = gpus.get(r["gpu"])
        if ref is None or ref.memory_bandwidth_gbs <= 0:
            continue
        scaled = r["images_per_s"] * _card_ratio(gpu, ref)
        if best is None or scaled < best[0]:
            card_basis = "scaled_card" if basis == "published" else basis
            best = (
                scaled,
                card_basis,
                f"{r['source']}; moved to {gpu.name} from {ref.name} by Lambda's measured "
                "ResNet-50 training ratio",
            )
    if best is None:
        return None
    value, how, source = best
    px = rows[0]["input_px"]
    if input_px > px:
        value *= (px / input_px) ** 2
    return Throughput(round(value * factor, 1), how, source + note)
