"""A member's measurement against the engine's figure for the same job ("I ran it" reports).

Compared as ../shared/eval/README.md says measured cases are: a figure read from torch
(`allocated`, `reserved`) against the engine's allocated view (tensors only), one read from
nvidia-smi or from nowhere said against its total view (what nvidia-smi shows: for vLLM and
SGLang the share of the card they reserve at start, as the answer says); the band is
the estimate's own fractions applied to that view (as bench/accuracy.py does). An
out-of-memory report is a bound: the job needed more than the card holds, which the engine
agrees with when its total view is over the card's usable memory.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel

from advisor.catalog import GpuSpec
from advisor.models.estimate import Estimate
from advisor.parse.measured import MeasuredReport

GIB = 2**30
ALLOCATED_VIEW = frozenset({"allocated", "reserved"})
Outcome = Literal["within", "above", "below", "oom_expected", "oom_missed"]
# allocated: torch's count; total: what nvidia-smi shows; share: what nvidia-smi shows of a
# serving engine (vLLM/SGLang), which reserves its share of the card up front
View = Literal["allocated", "total", "share"]


class Judgement(BaseModel):
    """One report judged. `error`: estimate / measured - 1 (negative: the engine was low)."""

    outcome: Outcome
    view: View
    estimate_bytes: int  # the engine's figure per card in `view`
    low_bytes: int
    high_bytes: int
    measured_bytes: int | None = None
    limit_bytes: int | None = None  # OOM: the card's usable memory
    error: float | None = None


class ReportSummary(BaseModel):
    """The engine on the stored reports (/stats)."""

    reports: int
    figures: int  # reports with a figure (the rest are out-of-memory bounds)
    median_abs_error_pct: float | None
    band_coverage_pct: float | None  # share of figures inside the band
    ooms: int
    ooms_agreed: int  # out-of-memory reports the engine also said would not fit


def judge_report(est: Estimate, report: MeasuredReport, card: GpuSpec) -> Judgement:
    """`est`: the engine's estimate for the job on `card` at the report's count."""
    if report.oom:
        limit = int(card.usable_vram_gib * GIB)
        total = est.total_bytes
        return Judgement(
            outcome="oom_expected" if total > limit else "oom_missed",
            view="total",
            estimate_bytes=total,
            low_bytes=int(total * (1 - est.band_low_fraction)),
            high_bytes=int(total * (1 + est.band_high_fraction)),
            limit_bytes=limit,
        )
    if report.value_bytes is None:
        raise ValueError("a report without a figure is an out-of-memory report or an error")
    allocated = report.where in ALLOCATED_VIEW
    value = est.allocated_bytes if allocated else est.total_bytes
    view: View = "allocated" if allocated else "total"
    if not allocated and est.nvidia_smi_bytes is not None:
        # vLLM/SGLang take gpu_memory_utilization of the card at start: nvidia-smi shows that
        # share whatever the model needs (advisor.recommend._with_engine_share), as the
        # answer said
        value, view = est.nvidia_smi_bytes, "share"
    low = int(value * (1 - est.band_low_fraction))
    high = int(value * (1 + est.band_high_fraction))
    measured = report.value_bytes
    outcome: Outcome = (
        "within" if low <= measured <= high else "above" if measured > high else "below"
    )
    return Judgement(
        outcome=outcome,
        view=view,
        estimate_bytes=value,
        low_bytes=low,
        high_bytes=high,
        measured_bytes=measured,
        error=value / measured - 1,
    )


def summarize(judgements: list[Judgement]) -> ReportSummary:
    figures = [j for j in judgements if j.measured_bytes is not None and j.error is not None]
    ooms = [j for j in judgements if j.outcome in ("oom_expected", "oom_missed")]
    return ReportSummary(
        reports=len(judgements),
        figures=len(figures),
        median_abs_error_pct=round(statistics.median(abs(j.error) for j in figures) * 100, 1)  # type: ignore[arg-type]
        if figures
        else None,
        band_coverage_pct=round(100 * sum(j.outcome == "within" for j in figures) / len(figures), 1)
        if figures
        else None,
        ooms=len(ooms),
        ooms_agreed=sum(j.outcome == "oom_expected" for j in ooms),
    )
