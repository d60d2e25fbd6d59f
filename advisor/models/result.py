"""What the engine answers an estimate with: the workload asked, the model it resolved to, the
estimate (None where no formula exists) and what it assumed. Slotted dataclasses like the
estimate's own results (advisor.models.estimate)."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.models.architecture import Architecture
from advisor.models.choices import Kind
from advisor.models.estimate import Estimate
from advisor.models.workload import Workload


@dataclass(slots=True)
class ResolvedModel:
    """The model the estimate was made for, after the catalog lookup (a dataclass like the
    estimate's results: built by the engine, read by every term)."""

    id: str | None
    name: str
    kind: Kind
    params_b: float
    active_params_b: float
    arch: Architecture | None
    from_catalog: bool
    source: str | None = None


@dataclass(slots=True)
class Assumption:
    field: str
    value: str


@dataclass(slots=True)
class EstimateResult:
    workload: Workload
    model: ResolvedModel
    estimate: Estimate | None  # None for rendering/video/simulation: no formula exists
    assumed: list[Assumption]

    @property
    def assumptions(self) -> list[str]:
        return [f"{a.field} = {a.value}" for a in self.assumed]
