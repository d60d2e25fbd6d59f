"""Reverse questions: the largest context, batch or model that fits a memory limit.

Each is a binary search over the forward estimate, so it can never disagree with it.
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.memory import estimate
from advisor.models import Workload


def _largest(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """Largest integer in [lo, hi] with fits(x) true, assuming fits is monotone."""
    if not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _total(w: Workload) -> int:
    est = estimate(w).estimate
    return est.total_bytes if est else 0


def max_context_tokens(w: Workload, limit_bytes: int, ceiling: int | None = None) -> int | None:
    """Largest context (prompt + generated tokens) whose total view fits `limit_bytes`."""
    from advisor.memory import resolve_model

    model, _ = resolve_model(w)
    top = ceiling or (model.arch.max_context_tokens if model.arch else 131072)

    def fits(tokens: int) -> bool:
        if w.mode.is_training:
            trial = w.model_copy(update={"seq_len": tokens})
        else:
            trial = w.model_copy(update={"context_tokens": tokens, "prompt_tokens": None, "new_tokens": None})
        return _total(trial) <= limit_bytes

    return _largest(256, max(top, 256), fits)


def max_batch_size(w: Workload, limit_bytes: int, ceiling: int = 4096) -> int | None:
    return _largest(1, ceiling, lambda b: _total(w.model_copy(update={"batch_size": b})) <= limit_bytes)
