"""The largest whole number a monotone test accepts, by halving: the size ladders of /fit
(advisor/fit.py) and the most GPU layers that fit (advisor/recommend/fixes.py) both ask it."""

from __future__ import annotations

from collections.abc import Callable


def largest(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """Largest integer in [lo, hi] with fits(x) true, assuming fits is monotone; None when
    not even `lo` fits."""
    if not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
