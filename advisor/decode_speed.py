"""Single-request decode speed fitted to measurements (data/decode_speed.toml).

One token takes `layers x c + bytes / (bandwidth x eta)`: a fixed cost per layer and the
weights (and filled KV cache) read once at a share eta of the card's memory bandwidth. Both
are fitted per stack (llama.cpp CUDA, llama.cpp Metal, vLLM, transformers) by least squares
on the relative error to the measured rows, so the share of bandwidth a decode step reaches
rises with the bytes it reads, as measured, instead of one constant for every model size.
"""

from __future__ import annotations

import math
import tomllib
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from advisor import catalog
from advisor.catalog import GpuSpec

DATA_FILE = Path(__file__).resolve().parent / "data" / "decode_speed.toml"
GIB = 1024**3
MIN_CARD_SIZES = 4  # a card with rows at this many model sizes gets its own fit
MAX_EFFICIENCY = 1.0


class DecodeFit(NamedTuple):
    efficiency: float  # eta: share of peak memory bandwidth the weight reads reach
    layer_s: float  # c: fixed seconds per layer per token


@cache
def table() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


@cache
def stack_of_runtime(runtime: str | None) -> str:
    """The stack a runtime's decode speed is fitted on (transformers when unknown)."""
    for name, stack in table()["stack"].items():
        if runtime in stack.get("runtimes", []):
            return name
    return "transformers"


def _points(rows: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    """(layers, bytes / bandwidth in s, measured seconds per token) of rows on known cards."""
    gpus = catalog.gpus()
    points = []
    for r in rows:
        gpu = gpus.get(r["gpu"])
        if gpu is None or gpu.memory_bandwidth_gbs <= 0:
            continue
        points.append(
            (
                float(r["layers"]),
                r["read_gib"] * GIB / (gpu.memory_bandwidth_gbs * 1e9),
                1 / r["tokens_per_s"],
            )
        )
    return points


def _fit(points: list[tuple[float, float, float]], c: float | None, k: float | None) -> DecodeFit:
    """Least squares of `layers x c + x x k = t` relative to t; c or k given: the other fitted."""
    a = [(n / t, x / t) for n, x, t in points]  # each row divided by t: target 1
    if c is None and k is None:
        s11 = sum(p * p for p, _ in a)
        s12 = sum(p * q for p, q in a)
        s22 = sum(q * q for _, q in a)
        b1, b2 = sum(p for p, _ in a), sum(q for _, q in a)
        det = s11 * s22 - s12 * s12
        c = (b1 * s22 - b2 * s12) / det
        k = (s11 * b2 - s12 * b1) / det
    elif k is None:
        assert c is not None
        k = sum(q * (1 - p * c) for p, q in a) / sum(q * q for _, q in a)
    elif c is None:
        c = sum(p * (1 - q * k) for p, q in a) / sum(p * p for p, _ in a)
    return DecodeFit(min(1 / k, MAX_EFFICIENCY), max(c, 0.0))


@cache
def stack_fit(stack: str) -> DecodeFit:
    """The fit over every row of a stack."""
    spec = table()["stack"][stack]
    rows = [r for r in table()["row"] if r["stack"] == stack]
    c = spec["layer_overhead_us"] * 1e-6 if "layer_overhead_us" in spec else None
    k = 1 / stack_fit(spec["efficiency_from"]).efficiency if "efficiency_from" in spec else None
    return _fit(_points(rows), c, k)


@cache
def _own_fit(stack: str, gpu_id: str) -> DecodeFit | None:
    """The card's own fit where it has rows at enough model sizes (stacks whose both terms
    are fitted only)."""
    spec = table()["stack"][stack]
    rows = [r for r in table()["row"] if r["stack"] == stack and r["gpu"] == gpu_id]
    free = "layer_overhead_us" not in spec and "efficiency_from" not in spec
    if not free or len({r["read_gib"] for r in rows}) < MIN_CARD_SIZES:
        return None
    return _fit(_points(rows), None, None)


@cache
def card_fit(stack: str, gpu_id: str) -> DecodeFit:
    """The card's own fit; else the fit of the nearest card by bandwidth with one of its
    own, of the same vendor and segment (an A100 or H200 under llama.cpp runs like the H100
    PCIe measured, not like the consumer cards); else the stack's."""
    own = _own_fit(stack, gpu_id)
    if own is not None:
        return own
    gpus = catalog.gpus()
    gpu = gpus.get(gpu_id)
    if gpu is None or gpu.memory_bandwidth_gbs <= 0:
        return stack_fit(stack)
    best: tuple[float, DecodeFit] | None = None
    for ref_id in {r["gpu"] for r in table()["row"] if r["stack"] == stack}:
        ref = gpus.get(ref_id)
        fit = _own_fit(stack, ref_id)
        if ref is None or fit is None or (ref.vendor, ref.segment) != (gpu.vendor, gpu.segment):
            continue
        distance = abs(math.log(gpu.memory_bandwidth_gbs / ref.memory_bandwidth_gbs))
        if best is None or distance < best[0]:
            best = (distance, fit)
    return best[1] if best else stack_fit(stack)


def decode_fit(runtime: str | None, gpu: GpuSpec) -> DecodeFit:
    """eta and the per-layer cost of this runtime on this card; a platform with a stack of
    its own (Apple silicon: llama.cpp Metal) uses it whatever the runtime."""
    from advisor.architectures import decode_stack

    stack = decode_stack(gpu) or stack_of_runtime(runtime)
    return card_fit(stack, gpu.id)


def tokens_per_s(fit: DecodeFit, layers: int, read_bytes: float, bandwidth_gbs: float) -> float:
    """One request's decode speed by the fit (no multi-card terms)."""
    return 1 / (layers * fit.layer_s + read_bytes / (bandwidth_gbs * 1e9 * fit.efficiency))


def host_read_gbs() -> float:
    """What llama.cpp's decode reads per second from system RAM for the layers -ngl leaves
    on the CPU ([host_offload])."""
    return float(table()["host_offload"]["read_gbs"])
