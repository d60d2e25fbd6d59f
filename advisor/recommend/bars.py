"""The memory breakdown of each option an answer shows, as rows for a picture (bot/chart.py
draws them): per card, the terms of the estimate at that option's card count, its band
and the card's usable memory. Numbers only; no drawing here."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.models.result import EstimateResult
from advisor.recommend.card_counts import workload_for
from advisor.recommend.estimates import estimate
from advisor.recommend.options import Option, Recommendation


@dataclass(slots=True)
class Bar:
    gpu_name: str
    count: int
    named: bool  # the card the user asked about (judged), not a pick
    terms: list[tuple[str, int]]  # term name (labels.toml [term]) -> bytes per card
    total_bytes: int
    low_bytes: int
    high_bytes: int
    usable_bytes: int
    fix: str | None = None  # a pick's change that brings it to the guide's headroom
    fixed_bytes: int | None = None


def option_bars(rec: Recommendation) -> list[Bar]:
    """One bar per option shown: the headline (the user's card or the top pick), then the
    other picks, each once. An option whose per-card figure is not the estimate at its
    count (an engine's share of the card) keeps the headline setup's terms when that is
    its figure, else one bar of its total with no terms."""
    h = rec.headline
    setup = rec.setup or rec.result
    if h is None or setup.estimate is None:
        return []
    out = [_bar(h, setup, h is rec.named)]
    seen = {(h.gpu_id, h.count)}
    for o in (rec.cheapest, rec.best_value, rec.fastest):
        if o is None or (o.gpu_id, o.count) in seen or not o.per_gpu_bytes:
            continue
        seen.add((o.gpu_id, o.count))
        at = setup if o.count == h.count else estimate(workload_for(rec.result.workload, o.count))
        out.append(_bar(o, at, False))
    return out


def _bar(o: Option, at: EstimateResult, named: bool) -> Bar:
    e = at.estimate
    if e is not None and abs(e.total_bytes - o.per_gpu_bytes) <= 0.01 * o.per_gpu_bytes:
        terms = [(t.name, t.bytes) for t in e.terms if t.bytes > 0]
        low, high = e.low_bytes, e.high_bytes
    else:
        terms, low, high = [], o.per_gpu_bytes, o.per_gpu_bytes
    return Bar(
        o.gpu_name,
        o.count,
        named,
        terms,
        o.per_gpu_bytes,
        low,
        high,
        o.usable_bytes,
        o.fix,
        o.fixed_bytes,
    )
