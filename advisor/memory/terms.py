"""The breakdown a memory estimate is made of: named terms, the CUDA context and allocator
slack that turn tensors into what nvidia-smi shows, and the uncertainty band."""

from __future__ import annotations

import dataclasses
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.models import (
    Assumption,
    BandBasis,
    Confidence,
    Estimate,
    Kind,
    ResolvedModel,
    Runtime,
    Term,
    Workload,
)

GIB = 2**30
BAND_FILE = Path(__file__).resolve().parent.parent / "data" / "band.toml"

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


@cache
def band_table() -> dict[str, Any]:
    with BAND_FILE.open("rb") as fh:
        return tomllib.load(fh)


def band_family(kind: Kind, training: bool) -> str:
    """The family whose measured spread sets the band: llm, diffusion or classic, by mode."""
    group = kind.value if kind in (Kind.llm, Kind.diffusion) else "classic"
    return f"{group}_{'training' if training else 'inference'}"


def band_runtime(runtime: Runtime | None, quantized: bool = False) -> str:
    """The runtime group whose measured spread sets the band (data/band.toml
    [runtime_groups]: vLLM, SGLang and TGI allocate alike, so do llama.cpp's front ends);
    no runtime is PyTorch eager, as transformers runs it. Weights stored under 16 bits are
    a group of their own ("transformers-quantized"): each quantizer's loading path keeps
    its own buffers and 16-bit layers, and measured runs spread wider there."""
    name = runtime.value if runtime is not None else "transformers"
    group = band_table()["runtime_groups"].get(name, name)
    return f"{group}-quantized" if quantized else group


def framework_modelled(framework: str | None) -> bool:
    """Whether the engine follows this stack's own code (data/band.toml
    modelled_frameworks); a stack it does not know gets the engine's widest spread."""
    if not framework:
        return True
    return framework.lower() in _modelled_frameworks()


@cache
def _modelled_frameworks() -> frozenset[str]:
    return frozenset(f.lower() for f in band_table()["modelled_frameworks"])


def pick_band(
    table: dict[str, Any],
    family: str,
    runtime: str,
    unmodelled: bool,
    stratum: str = "",
    guessed: bool = False,
) -> tuple[float, float, str, int, int]:
    """The band fitted for the narrowest level that had enough measurements: the stratum of
    the family under this runtime (strata.py: context regime, how quantized weights load),
    else the family under this runtime, else the family, else everything (a level fitted
    from too few sources is not in the table: bench/accuracy.py leaves it out). A stack the
    engine does not model takes, per side, the wider of its level's and the spread measured
    on such stacks ([unmodelled.<family>], else [unmodelled], else everything's); a model
    whose architecture was guessed from its size likewise takes the spread measured on such
    models ([guessed.<family>], else [guessed], else the fixed widening guessed_arch_*). The
    levels are fitted on modelled stacks and named architectures. Returns (low, high, level,
    sources, cases); `table` is band.toml's or a re-fit's."""
    row = table.get("stratum", {}).get(family, {}).get(runtime, {}).get(stratum)
    level = f"{family}/{runtime}/{stratum}"
    if row is None:
        row, level = table.get("cell", {}).get(family, {}).get(runtime), f"{family}/{runtime}"
    if row is None:
        row, level = table.get("family", {}).get(family), family
    if row is None:
        row, level = table["all"], "all"
    lo, hi = row["low"], row["high"]
    if unmodelled:
        wide = _knows_less(table, "unmodelled", family) or table["all"]
        lo, hi = max(lo, wide["low"]), max(hi, wide["high"])
    if guessed:
        if wide := _knows_less(table, "guessed", family):
            lo, hi = max(lo, wide["low"]), max(hi, wide["high"])
        else:
            lo, hi = (
                lo + table.get("guessed_arch_low", 0.0),
                hi + table.get("guessed_arch_high", 0.0),
            )
    return lo, hi, level, row["sources"], row["cases"]


def new_source_widening(table: dict[str, Any]) -> tuple[float, float]:
    """How much each side widens, per unit of the estimate the engine derives rather than
    knows ([new_source], fitted by `bench/accuracy.py --fit-band --calibrate` on sources the
    engine was never tuned on): the levels are fitted on the very sources the engine's terms
    were checked against, and measurements from sources it never saw spread wider, by as
    much as the part it works out (activations, caches, buffers, overhead) and not by a
    named model's 16- or 32-bit weights, which are counted exactly (docs/accuracy.md).
    (0, 0) where none is fitted."""
    row = table.get("new_source")
    if not isinstance(row, dict):
        return 0.0, 0.0
    return row["low_per_derived"], row["high_per_derived"]


def _knows_less(table: dict[str, Any], what: str, family: str) -> dict[str, Any] | None:
    """The spread fitted where the engine knows less (`what`: "unmodelled" stacks or
    "guessed" architectures): the family's row where enough sources measured it, else all
    such cases' row, else None. A row is [what] itself ("low"/"high" keys), its families
    nested under it ([what.<family>])."""
    row = table.get(what)
    if not isinstance(row, dict):
        return None
    fam = row.get(family)
    if isinstance(fam, dict) and "high" in fam:
        return fam
    return row if "high" in row else None


@cache  # every estimate asks; the table is read once per process
def family_band(kind: Kind, training: bool) -> tuple[float, float]:
    """The family's band before its runtime is known (estimate() settles it: settle_band)."""
    lo, hi, *_ = pick_band(band_table(), band_family(kind, training), "-", False)
    return lo, hi


def band(
    model: ResolvedModel, spec: ModelSpec | None, training: bool, arch_given: bool = False
) -> tuple[float, float]:
    """The family's band (family_band); settle_band gives the final one."""
    return family_band(model.kind, training)


@cache
def _settled(
    family: str, runtime: str, unmodelled: bool, guessed: bool, stratum: str = ""
) -> tuple[float, float, Confidence, BandBasis]:
    table = band_table()
    lo, hi, level, sources, cases = pick_band(table, family, runtime, unmodelled, stratum, guessed)
    confidence = confidence_of(lo, hi)
    basis = BandBasis(level, sources, cases, unmodelled, guessed, family, runtime, stratum)
    return round(lo, 3), round(hi, 3), confidence, basis


def settle_band(
    est: Estimate,
    kind: Kind,
    w: Workload,
    spec: ModelSpec | None,
    model: ResolvedModel,
    fmt: str | None = None,
    stratum: str = "",
) -> None:
    """The estimate's final band: the measured spread of its family under the runtime it
    was made for, in its stratum (`stratum`: strata.band_stratum) where enough sources
    measured it (data/band.toml, fitted by `bench/accuracy.py --fit-band` from
    leave-one-source-out residuals), widened for a stack the engine does not model and for
    an architecture guessed from the size alone (no catalog entry, none given). `fmt`: the
    weights' format the estimate used (told or assumed)."""
    guessed = (
        (spec is None and w.arch is None and model.arch is not None)
        # a pipeline the catalog lacks, built from its size (diffusion.generic_diffusion_spec,
        # video_generic.generic_video_spec)
        or (spec is not None and spec.source.startswith(GENERIC_SOURCE))
        # a vision network the catalog lacks: its activations from the size fit over measured
        # classifiers or a family median (classic.fallback_activation_bytes_per_sample,
        # dense_prediction_bytes_per_sample)
        or (kind == Kind.classic and spec is None and w.arch is None)
    )
    lo, hi, confidence, basis = _settled(
        band_family(kind, w.mode.is_training),
        band_runtime(est.runtime, _quantized(fmt)),
        not framework_modelled(w.framework),
        guessed,
        stratum,
    )
    total = est.total_bytes
    # A named model's 16- or 32-bit weights on the card are known exactly: no measurement
    # of it runs below them, however far below the estimate other setups of its family ran
    # (less a decimal "GB" read as GiB: 1e9 / 2**30). Quantized weights are not a floor:
    # loaders differ in what they keep unquantized.
    exact = not guessed and not _quantized(fmt)
    resident = sum(t.bytes for t in est.terms if t.name == "weights") if exact else 0
    # The widening for a source the engine never saw scales with the part it derives: 16-
    # or 32-bit weights are parameters x bytes (also for a model known by its size alone)
    # and weights stored quantized (GGUF, AWQ, GPTQ, FP8) are the checkpoint's own bytes;
    # weights a library quantizes while loading (bitsandbytes, torchao, quanto) are not
    # counted (its buffers and 16-bit layers are what spread). Confidence stays the level's.
    onload = "onload" in stratum.split("-")  # strata.band_stratum: quantized while loading
    counted = 0 if onload else sum(t.bytes for t in est.terms if t.name == "weights")
    derived = max(0.0, 1 - counted / total) if total > 0 else 1.0
    k_lo, k_hi = new_source_widening(band_table())
    measured_hi = hi
    lo, hi = min(lo + k_lo * derived, 0.95), hi + k_hi * derived
    floor = min(resident * DECIMAL_GB, total)
    if total > 0 and floor > total * (1 - lo):
        lo = 1 - floor / total
        confidence = confidence_of(lo, measured_hi)
    est.measured_high_bytes = int(total * (1 + measured_hi))
    est.low_bytes = int(total * (1 - lo))
    est.high_bytes = int(total * (1 + hi))
    est.band_low_fraction, est.band_high_fraction = lo, hi
    est.confidence = confidence
    est.band_basis = dataclasses.replace(basis, derived_share=round(derived, 3))


DECIMAL_GB = 1e9 / 2**30


def confidence_of(lo: float, hi: float) -> Confidence:
    """How sure the figure is, from the band's wider side."""
    width = max(lo, hi)
    return (
        Confidence.high if width <= 0.15 else Confidence.medium if width <= 0.3 else Confidence.low
    )


def _quantized(fmt: str | None) -> bool:
    spec = catalog.find_format(fmt) if fmt else None
    return spec is not None and spec.bits < 16


# Terms alive for the whole step (rebalance scales the others).
_RESIDENT = frozenset(
    ("weights", "quant_state", "gathered_layers", "fsdp_root_unit", "compute_copy", "optimizer")
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
