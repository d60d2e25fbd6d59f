"""The band's widening for sources the engine was never tuned on: [new_source] in
advisor/data/band.toml.

The band's levels are split-conformal quantiles of the residuals on the development cases
(checks/accuracy.fit_band), and the engine's terms were checked against those very sources,
so the levels are narrower than what a new source shows. The calibration sets are cases
nobody who changed the engine read. A new source's surprise lies in what the engine works
out (activations, caches, buffers, allocator, unstated settings), not in a named model's
16- or 32-bit weights, which it counts exactly; so each side widens by k x the estimate's
derived share (BandBasis.derived_share), and k is the split-conformal quantile, per side,
of (residual - the level's side) / derived share over the calibration cases: the widening
that holds BAND_COVERAGE of measurements from a source the engine never saw. One k per side
for all levels: the calibration sets are too few per family to fit each its own
(docs/accuracy.md)."""

from __future__ import annotations

from collections import defaultdict

from checks.conformal import (
    BAND_COVERAGE,
    CASES_PER_SOURCE,
    HELD_OUT_PER_SOURCE,
    MIN_SOURCES,
    UNDER_SHARE,
    conformal,
    grouped,
    level_band,
    points,
)

MIN_SHARE = 0.02  # a derived share this small still widens a little (never a divide by 0)


def _scores(rows: list[dict], table: dict) -> list[tuple[float, float, str]]:
    """(excess over the high side, excess under the low side), each per unit of derived
    share, and the source, per measured case."""
    out = []
    for r in points(rows):
        lo, hi = level_band(table, r)
        x = r["measured_bytes"] / r["estimate_bytes"] - 1
        share = max(r["derived_share"], MIN_SHARE)
        out.append(((x - hi) / share, (-x - lo) / share, r["group"]))
    return out


def fit_new_source(rows: list[dict], table: dict) -> dict | None:
    """[new_source]: each side's widening per unit of derived share (never below 0), every
    source weighted as at most CASES_PER_SOURCE cases; None where fewer than MIN_SOURCES
    sources were measured."""
    scores = _scores(rows, table)
    per_source: dict[str, int] = defaultdict(int)
    for *_, g in scores:
        per_source[g] += 1
    if len(per_source) < MIN_SOURCES:
        return None
    weight = {g: min(1.0, CASES_PER_SOURCE / n) for g, n in per_source.items()}
    misses = 1 - BAND_COVERAGE
    hi = conformal([(s, weight[g]) for s, _, g in scores], 1 - misses * UNDER_SHARE)
    lo = conformal([(s, weight[g]) for _, s, g in scores], 1 - misses * (1 - UNDER_SHARE))
    if hi is None or lo is None:
        return None
    return {
        "low_per_derived": round(max(lo, 0.0), 3),
        "high_per_derived": round(max(hi, 0.0), 3),
        "sources": len(per_source),
        "cases": len(scores),
    }


def held_with(rows: list[dict], table: dict, fit: dict | None) -> tuple[int, int]:
    """(held, judged): the cases inside the levels' band widened by `fit`."""
    k_lo, k_hi = (fit["low_per_derived"], fit["high_per_derived"]) if fit else (0.0, 0.0)
    pts = _scores(rows, table)
    return sum(a <= k_hi and b <= k_lo for a, b, _ in pts), len(pts)


def leave_one_calibration_source_out(rows: list[dict], table: dict) -> dict:
    """The widening re-fitted without each calibration source, judged on that source's
    cases: the coverage a new source can expect (pooled, and each source as at most
    HELD_OUT_PER_SOURCE cases)."""
    held = judged = 0
    w_held = w_n = 0.0
    for group, own in grouped(points(rows), "group").items():
        others = [r for r in points(rows) if r["group"] != group]
        h, n = held_with(own, table, fit_new_source(others, table))
        held, judged = held + h, judged + n
        w = min(1.0, HELD_OUT_PER_SOURCE / n) if n else 0.0
        w_held, w_n = w_held + w * h, w_n + w * n
    return {
        "cases": judged,
        "held": held,
        "pooled": round(held / judged, 3) if judged else None,
        "per_source_capped": round(w_held / w_n, 3) if w_n else None,
    }


def section(fit: dict | None, loso: dict) -> str:
    """band.toml's [new_source] section, with the calibration's own check as a comment."""
    if fit is None:
        return f"# fewer than {MIN_SOURCES} calibration sources: no [new_source] widening"
    return (
        f"# re-fitted without each calibration source, it holds {loso['pooled']} of that"
        f" source's cases ({loso['per_source_capped']} with each source as at most"
        f" {HELD_OUT_PER_SOURCE})\n"
        f"[new_source]\nlow_per_derived = {fit['low_per_derived']}\n"
        f"high_per_derived = {fit['high_per_derived']}\n"
        f"sources = {fit['sources']}\ncases = {fit['cases']}\n"
    )
