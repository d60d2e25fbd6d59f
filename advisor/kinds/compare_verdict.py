"""Which side of a comparison wins: the one that runs it, else the faster (two models: the
one that needs less memory), with the cheaper named beside it."""

from __future__ import annotations

from advisor.kinds.compare_sides import Side, Verdict

RUNS = ("fits", "tight")
# Two models' memory within this share of each other: "about the same" (below the
# estimate's own precision, so no winner is named on it)
SAME_MEMORY_SHARE = 0.03


def side_label(side: Side, models: bool) -> str:
    if models:
        return side.model_name or side.gpu_name
    return f"{side.count}× {side.gpu_name}" if side.count > 1 else side.gpu_name


def _faster(a: Side, b: Side) -> bool | None:
    """Whether `a` does the job faster than `b` (decode speed, hours, images per minute)."""
    if a.tokens_per_s and b.tokens_per_s:
        return a.tokens_per_s > b.tokens_per_s
    if a.train_hours and b.train_hours:
        return a.train_hours < b.train_hours
    if a.images_per_min and b.images_per_min:
        return a.images_per_min > b.images_per_min
    return None


def _speed(s: Side) -> tuple[float | None, str]:
    if s.tokens_per_s:
        return s.tokens_per_s, "tok/s"
    if s.train_hours:
        return s.train_hours, "h"
    return s.images_per_min, "img/min"


def verdict_of(sides: list[Side], models: bool) -> Verdict | None:
    """Which side wins, for a job judged on each (None without a job or with one side)."""
    judged = [s for s in sides if s.verdict is not None]
    if len(judged) < 2:
        return None
    running = [s for s in judged if s.verdict in RUNS]
    if models and len(running) == len(judged):
        a, b = sorted(judged, key=lambda s: s.per_card_bytes or 0)[:2]
        lo, hi = a.per_card_bytes or 0, b.per_card_bytes or 0
        quick = _faster(a, b)
        faster = None if quick is None else side_label(a if quick else b, models)
        basis = "same_memory" if hi - lo <= SAME_MEMORY_SHARE * hi else "less_memory"
        return Verdict(
            basis=basis,
            winner=side_label(a, models),
            loser=side_label(b, models),
            winner_value=round(lo / 2**30, 1),
            loser_value=round(hi / 2**30, 1),
            faster=faster,
        )
    if not running:
        return Verdict(basis="none_fits")
    if len(running) == 1:
        win = running[0]
        other = next(s for s in judged if s is not win)
        alt = other.fits_as if other.fits_as and other.fits_as.verdict in RUNS else None
        return Verdict(
            basis="only_fits",
            winner=side_label(win, models),
            loser=side_label(other, models),
            winner_value=win.tokens_per_s if alt else None,
            loser_format=alt.format if alt else None,
            loser_format_tokens_per_s=alt.tokens_per_s if alt else None,
        )
    a, b = running[:2]
    quick = _faster(a, b)
    if quick is None:
        return None
    win, lose = (a, b) if quick else (b, a)
    cheaper = None
    if win.rent_per_hour and lose.rent_per_hour and lose.rent_per_hour < win.rent_per_hour:
        cheaper = side_label(lose, models)
    return Verdict(
        basis="faster",
        winner=side_label(win, models),
        loser=side_label(lose, models),
        winner_value=_speed(win)[0],
        loser_value=_speed(lose)[0],
        cheaper=cheaper,
        unit=_speed(win)[1],
    )
