"""The memory estimate: its named terms, the band and what it was measured on, and what a
serving engine leaves for the KV cache on one card.

The estimate's results (Term, Estimate, Assumption, EstimateResult) are built by the
engine alone from values of the right types, ~8 times per new question, and read ~450
times: slotted dataclasses, which pydantic validates and dumps inside a model
(recommend's Recommendation) as it does a model. A pydantic model defines `__getattr__`,
which keeps CPython from specializing a read on it (advisor/recommend/options.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel

from advisor.models.choices import Runtime


class Confidence(StrEnum):
    high = "high"
    medium = "medium"
    low = "low"


@dataclass(slots=True)
class Term:
    """One named piece of the memory breakdown with the arithmetic that produced it."""

    name: str
    bytes: int
    formula: str  # English arithmetic, for logs and the CLI
    # For answers in the user's language: `formula_key` names a line in
    # templates/{lang}/formulas.toml, filled with `values` (None: show `formula`).
    formula_key: str | None = None
    values: dict[str, float | int | str] = field(default_factory=dict)


@dataclass(slots=True)
class BandBasis:
    """What an estimate's low-high band was measured on (data/band.toml): the level whose
    leave-one-source-out residuals set it (`family/runtime`, else the family, else `all`
    where too few sources were measured), how many sources and cases, and what widened it."""

    level: str
    sources: int
    cases: int
    unmodelled_framework: bool = False  # a stack the engine does not follow: widest spread
    guessed_architecture: bool = False  # the model known only by its size
    # the family and runtime group (with "-quantized" for weights under 16 bits) asked for,
    # whatever level answered
    family: str = ""
    runtime: str = ""
    # the stratum inside the runtime group (memory/strata.py: context regime, quantized on
    # load or stored quantized), whatever level answered; "" where no axis applies
    stratum: str = ""
    # share of the estimate worked out, not counted: what [new_source] widens by (band.py)
    derived_share: float = 1.0


@dataclass(slots=True)
class Estimate:
    per_gpu: bool
    num_gpus: int
    terms: list[Term]
    allocated_bytes: int  # what torch.cuda.max_memory_allocated would show
    total_bytes: int  # what nvidia-smi would show (adds context, allocator slack)
    low_bytes: int
    high_bytes: int
    confidence: Confidence
    # The band as fractions of the estimate, to apply to either view (allocated, total).
    band_low_fraction: float = 0.0
    band_high_fraction: float = 0.0
    runtime: Runtime | None = None  # the runtime whose allocation the terms follow
    # Serving engines (vLLM/SGLang): KV bytes per token per card and everything else, so a
    # caller can say how much context x concurrency a card leaves room for.
    kv_bytes_per_token: int | None = None
    non_kv_bytes: int | None = None
    # What nvidia-smi shows on the headline card when the runtime takes its share up front
    # (vLLM/SGLang: gpu_memory_utilization x the card); None: total_bytes.
    nvidia_smi_bytes: int | None = None
    # What the band was measured on (band.settle_band).
    band_basis: BandBasis | None = None
    # the level's high end before [new_source]: how far measured setups like this ran, what
    # near-the-limit decisions use (None: high_bytes)
    measured_high_bytes: int | None = None

    @property
    def decision_high_bytes(self) -> int:
        return self.high_bytes if self.measured_high_bytes is None else self.measured_high_bytes

    @property
    def breakdown(self) -> dict[str, int]:
        return {t.name: t.bytes for t in self.terms}


class ServingFit(BaseModel):
    """A serving engine (vLLM/SGLang) on one card: what nvidia-smi shows and what fits."""

    gpu_memory_utilization: float
    nvidia_smi_bytes: int  # the engine pre-allocates its share of the card
    non_kv_bytes: int  # weights + activation profile + non-torch + CUDA graphs
    kv_budget_bytes: int  # what is left for the KV cache (0: the model does not fit)
    max_context_tokens: int  # longest single sequence the KV budget holds
    max_concurrency: int  # sequences of the requested context held at once
