"""The uncertainty band around every estimate (data/band.toml, docs/accuracy.md): the level
measured for its family, runtime group and stratum, widened where the engine knows less and
for a source nobody measured, settled on the estimate with its confidence."""

from __future__ import annotations

import dataclasses
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.terms import GENERIC_SOURCE
from advisor.models.choices import Kind, Runtime
from advisor.models.estimate import BandBasis, Confidence, Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

BAND_FILE = Path(__file__).resolve().parent.parent / "data" / "band.toml"


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


def _sized_by_the_fit(spec: ModelSpec | None) -> bool:
    """A vision network whose activations come from classic.py's size fit: uncatalogued,
    or catalogued with neither a measured figure nor an architecture."""
    return spec is None or (spec.arch is None and not spec.activation_bytes_per_sample)


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
        # dense_prediction_bytes_per_sample); a catalogued one known by its size alone (no
        # measured figure, no arch: data/models/detection_mmdet.toml RTMDet) takes the same fit
        or (kind == Kind.classic and w.arch is None and _sized_by_the_fit(spec))
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
