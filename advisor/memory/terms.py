"""The breakdown a memory estimate is made of: named terms, and the CUDA context and
allocator slack that turn tensors into what nvidia-smi shows (the uncertainty band:
advisor/memory/band.py)."""

from __future__ import annotations

from advisor.models.estimate import Confidence, Estimate, Term
from advisor.models.result import Assumption
from advisor.models.workload import Workload

GIB = 2**30

# CUDA context + cuBLAS/cuDNN workspaces, outside torch's allocator. HF "Efficient
# training on a single GPU" measured ~1343 MiB on a V100 (CUDA 11, eager module loading);
# PyTorch >= 2.1 with lazy loading (CUDA 11.7+) needs ~0.5 GiB. We keep the larger figure:
# an under-estimate is the costly error.
CUDA_CONTEXT_BYTES = int(1.25 * GIB)
# NCCL communicator buffers per card once more than one GPU talks (NCCL_BUFFSIZE 4 MiB
# per channel x peers x protocols; ~0.5 GiB observed on 8-GPU nodes, llm-d non_torch 0.6).
NCCL_BYTES = GIB // 2
# Caching-allocator slack (reserved - allocated) at the peak: a few percent in inference,
# ~5% in training where tensor sizes vary (PyTorch CUDA memory-management notes).
SLACK_INFERENCE = 0.03
SLACK_TRAINING = 0.05
# The source of a pipeline the engine builds from a size alone (no catalog entry).
GENERIC_SOURCE = "assumed (no catalog entry)"


class LeanTerm:
    """A term of a `lean` breakdown: its name and bytes, what an estimate's own arithmetic
    reads back of its terms (sums by name); no formula, no values."""

    __slots__ = ("name", "bytes")

    def __init__(self, name: str, b: int) -> None:
        self.name = name
        self.bytes = b


class Breakdown:
    """Collects terms and the assumptions made while computing them.

    `lean`: for an estimate whose caller reads only its totals, assumptions and runtime
    (the changes a recommendation tries, the precision grid's cells): terms are `LeanTerm`s,
    never built into `Term`s or given their text (a fifth of such an estimate's cost). The
    numbers are the full estimate's; such an estimate must not reach an answer
    (advisor.recommend.estimates keeps them apart)."""

    def __init__(self, lean: bool = False) -> None:
        self.terms: list[Term] = []
        self.assumed: list[Assumption] = []
        self.lean = lean

    def add(
        self,
        name: str,
        value: float,
        formula: str,
        key: str | None = None,
        **values: float | int | str,
    ) -> int:
        """Add a term. `key` names its line in templates/{lang}/formulas.toml (default: the
        term's name) and `values` fill that line's placeholders."""
        b = int(value)
        if b > 0:
            if self.lean:
                self.terms.append(LeanTerm(name, b))  # type: ignore[arg-type]
                return b
            self.terms.append(
                Term(
                    name=name,
                    bytes=b,
                    formula=formula,
                    formula_key=key or name,
                    values={"gib": round(b / GIB, 2), **values},
                )
            )
            return b
        return 0

    def assume(self, field: str, value: object) -> None:
        text = str(value)
        try:
            assumption = _ASSUMPTIONS[field, text]
        except KeyError:
            assumption = Assumption(field, text)
            if len(_ASSUMPTIONS) < 4096:  # bounded: values can come from users' numbers
                _ASSUMPTIONS[field, text] = assumption
        self.assumed.append(assumption)


# The same few assumptions ("attention = sdpa", "batch_size = 1") are made by every estimate;
# each is one shared, read-only object (nothing changes an assumption once made).
_ASSUMPTIONS: dict[tuple[str, str], Assumption] = {}


def gib(b: float) -> str:
    return f"{b / GIB:.2f} GiB"


# The overhead term's constant parts, written once (finish runs for every estimate).
_OVERHEAD = f"CUDA context {gib(CUDA_CONTEXT_BYTES)}"
_OVERHEAD_NCCL = f"{_OVERHEAD} + NCCL {gib(NCCL_BYTES)}"
_CONTEXT_GIB = round(CUDA_CONTEXT_BYTES / GIB, 2)
_NCCL_GIB = round(NCCL_BYTES / GIB, 2)


def finish(
    acc: Breakdown,
    allocated: float,
    w: Workload,
    training: bool,
    band: tuple[float, float],
    collectives: bool = True,
    reserve: int = 0,
    own_context: int | None = None,
) -> Estimate:
    """`collectives`: the cards talk through NCCL (not llama.cpp's layer split, which
    copies activations between cards without it). `reserve`: segments the caching allocator
    keeps beyond the flat slack for an allocation pattern the caller replayed (nvidia-smi
    view only; term allocator_reserve). `own_context`: a runtime outside PyTorch (llama.cpp)
    whose context is this and whose buffers are allocated at their size: no slack."""
    allocated = int(allocated)  # a caller's sum may carry a float term (no validation here)
    nccl = w.num_gpus > 1 and collectives
    context = CUDA_CONTEXT_BYTES if own_context is None else own_context
    overhead = int(context + (NCCL_BYTES if nccl else 0))
    slack_fraction = SLACK_TRAINING if training else SLACK_INFERENCE
    if own_context is not None:
        slack_fraction = 0.0
    slack = int(allocated * slack_fraction)
    reserved = (
        allocated
        + slack
        + acc.add(
            "allocator_reserve",
            reserve,
            "caching-allocator segments left by a cache concatenated layer by layer",
        )
    )
    total = reserved + overhead
    slack_pct = int(slack_fraction * 100)
    if acc.lean:
        acc.terms.append(LeanTerm("runtime_overhead", overhead + slack))  # type: ignore[arg-type]
    elif own_context is not None:
        acc.add(
            "runtime_overhead",
            overhead,
            f"context {gib(context)}, buffers allocated at their size",
            key="runtime_overhead.own",
            context_gib=round(context / GIB, 2),
        )
    else:
        _add_overhead(acc, overhead + slack, nccl, slack_pct)
    lo, hi = band
    width = max(lo, hi)
    confidence = (
        Confidence.high if width <= 0.15 else Confidence.medium if width <= 0.3 else Confidence.low
    )
    return Estimate(
        per_gpu=True,
        num_gpus=w.num_gpus,
        terms=acc.terms,
        allocated_bytes=allocated,
        total_bytes=total,
        low_bytes=int(total * (1 - lo)),
        high_bytes=int(total * (1 + hi)),
        confidence=confidence,
        band_low_fraction=lo,
        band_high_fraction=hi,
    )


def _add_overhead(acc: Breakdown, b: int, nccl: bool, slack_pct: int) -> None:
    """The CUDA context (+ NCCL) and allocator slack as one term."""
    acc.terms.append(
        Term(
            name="runtime_overhead",
            bytes=b,
            formula=(_OVERHEAD_NCCL if nccl else _OVERHEAD) + f" + allocator slack {slack_pct}%",
            formula_key="runtime_overhead.nccl" if nccl else "runtime_overhead",
            values={
                "gib": round(b / GIB, 2),
                "context_gib": _CONTEXT_GIB,
                "nccl_gib": _NCCL_GIB,
                "slack_pct": slack_pct,
            },
        )
    )


# Terms alive for the whole step (rebalance scales the others).
_RESIDENT = frozenset(
    (
        "weights",
        "quant_state",
        "kbit_upcast",
        "gathered_layers",
        "fsdp_root_unit",
        "compute_copy",
        "optimizer",
    )
)


def rebalance(acc: Breakdown, allocated: float) -> None:
    """Terms that are not alive at the same time (gradients vs activations) are listed in
    full; scale the non-resident ones so the breakdown sums to the peak."""
    fixed = 0
    rest = []
    for t in acc.terms:
        if t.name in _RESIDENT:
            fixed += t.bytes
        else:
            rest.append(t)
    total_rest = sum(t.bytes for t in rest)
    target = max(allocated - fixed, 0)
    if total_rest <= 0:
        return
    factor = target / total_rest
    full = [t.bytes for t in rest]
    scaled = [int(b * factor) for b in full]
    # allocated may be a float sum
    scaled[-1] += int(allocated) - fixed - sum(scaled)
    if acc.lean:  # the bytes alone (a full breakdown's terms would hold the same)
        for t, now in zip(rest, scaled, strict=True):
            t.bytes = now
        return
    at_peak = abs(factor - 1) > 0.01
    for t, was, now in zip(rest, full, scaled, strict=True):
        t.bytes = now
        values = t.values
        values["gib"] = round(now / GIB, 2)
        if at_peak and was > 0:
            # The term's own arithmetic ("1100M x 2 B") no longer matches its share of the
            # peak: say what is shown, the share alive at the peak of the full size.
            share = round(100 * now / was)
            t.formula += f"; {share}% of its {gib(was)} alive at the peak"
            t.formula_key = "at_peak"
            values["share_pct"] = share
            values["full_gib"] = round(was / GIB, 2)


# The formula keys of a weights term that holds a load's peak (load_peak's callers), not the
# weights resident while the job runs: openai-whisper's fp32 model beside its fp16 checkpoint
# (809M params: 4.5 GiB at load, 3.0 GiB resident), 16-bit weights before they are quantized.
# The answer names such a term for what it holds (labels.toml term.weights_load_peak).
LOAD_PEAK_KEYS = frozenset(
    {"weights.before_quantization", "weights.whisper_load", "weights.bnb_load_before_offload"}
)


def shown_name(term: Term) -> str:
    """The label key of a term as an answer shows it: a weights term that is a load's peak
    is `weights_load_peak`, so its bar does not read as the resident weights."""
    if term.name == "weights" and term.formula_key in LOAD_PEAK_KEYS:
        return "weights_load_peak"
    return term.name


def load_peak(
    acc: Breakdown,
    allocated: int,
    load_bytes: float,
    note: str = "16-bit weights on the GPU before they are quantized (load peak)",
    key: str = "weights.before_quantization",
) -> int:
    """A load that is a peak of its own (weights loaded in 16-bit and quantized on the GPU;
    bitsandbytes components loaded before an offload mode moves them off): if it is the
    larger peak, the breakdown becomes the load (the run's terms were never alive with it)."""
    if load_bytes <= allocated:
        return allocated
    acc.terms.clear()
    return acc.add("weights", load_bytes, note, key=key)


def weights_line(
    params: float, weight_bytes: float, bits: float, fmt: str, cards: int, kept_bytes: float = 2.0
) -> tuple[str, dict[str, float | int | str]]:
    """The formula key and values of a weights term whose line must compute: a format that
    leaves embeddings, lm_head or non-expert layers in 16-bit (AWQ, GPTQ, NF4, fp8, MXFP4)
    shows that part apart, or "70.55B params x 4.5 bits (nf4) = 39.77 GiB" reads as
    arithmetic that does not hold (it makes 36.96)."""
    kept = (weight_bytes - params * bits / 8) / (kept_bytes - bits / 8) if bits < 16 else 0.0
    values: dict[str, float | int | str] = {
        "params_b": round(params / 1e9, 3),
        "bits": round(bits, 2),
        "format": fmt,
        "cards": cards,
    }
    if kept <= 0.005 * params:
        return "weights", values
    values["quant_b"] = round((params - kept) / 1e9, 2)
    values["rest_b"] = round(kept / 1e9, 2)
    # loaded in float32 (torch_dtype): the unquantized modules stay fp32 (quantizers.toml)
    return ("weights.mixed_fp32" if kept_bytes >= 4 else "weights.mixed"), values
