"""The split-conformal pieces the band's fits share (checks/accuracy.py: the levels;
checks/calibration.py: the widening for sources nobody measured)."""

from __future__ import annotations

from collections import defaultdict

from advisor.memory.band import pick_band

# The band must hold this share of measurements from a source the fit never saw; of the
# misses, UNDER_SHARE may lie above the band (an under-estimate is the costly miss).
BAND_COVERAGE = 0.90
UNDER_SHARE = 0.5  # of the 10% allowed misses, at most half may lie above the band
# Each source counts as at most this many cases in a fit: the measurements the engine is
# judged on come at most four per source, and one long table must not set a family's band.
CASES_PER_SOURCE = 4
HELD_OUT_PER_SOURCE = 4  # the coverage line weights each left-out source the same way
# A level (family under a runtime, or a family) is fitted only from this many sources;
# with fewer the next level up holds (pick_band), which is how the band widens where the
# engine was measured less.
MIN_SOURCES = 4


def points(rows: list[dict]) -> list[dict]:
    return [r for r in rows if "error" in r]


def grouped(rows: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        out[str(r.get(key, "-"))].append(r)
    return dict(sorted(out.items()))


def conformal(scores: list[tuple[float, float]], level: float) -> float | None:
    """Weighted split-conformal quantile: the smallest score s with the weight of scores
    <= s at least `level` of the total plus one more case's (the case being judged, at
    the full weight 1); None when even the largest score falls short (too few cases)."""
    total = sum(w for _, w in scores) + 1.0
    run = 0.0
    for s, w in sorted(scores):
        run += w
        if run >= level * total:
            return s
    return None


def level_band(table: dict, r: dict) -> tuple[float, float]:
    """(low, high) the band table gives a scored case (its family, runtime group, stratum
    and what the engine knew), before the widening for sources nobody measured."""
    lo, hi, *_ = pick_band(
        table, r["family"], r["band_runtime"], r["unmodelled"], r.get("stratum", ""), r["guessed"]
    )
    return lo, hi
