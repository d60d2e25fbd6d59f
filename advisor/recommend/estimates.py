"""`advisor.memory.estimate`, memoized by workload (advisor.memo).

Why: a recommendation judges one job on every card, and memory per card does not depend on
which card: the fixes tried per card (a smaller format, a shorter context, LoRA…) are the
same few changed workloads for all of them, and the same questions come back. The engine's
own function stays the one place the arithmetic lives; this only remembers its answers.
"""

from __future__ import annotations

from collections.abc import Hashable

from pydantic import BaseModel

from advisor import memory
from advisor.catalog import catalog_version
from advisor.memo import Memo
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload

# ~17 kB an entry (tracemalloc); a recommendation makes ~24: 1024 hold about 40 questions'.
_ESTIMATES: Memo[EstimateResult] = Memo("estimate", 1024)


def workload_key(w: Workload) -> Hashable:
    """Every field's value and its type, in field order: two workloads with the same key
    have the same JSON (the key is stricter: a str where the field holds an enum, 1 where
    1.0, are told apart). A nested model (the architecture) by its JSON. A new question
    asks ~10 estimates; the JSON dump was a fifth of each cached one's cost."""
    return _Key(_values(w))


def _values(w: Workload) -> tuple:
    values = tuple(w.__dict__.values())
    if w.arch is not None:
        values = tuple(v.model_dump_json() if isinstance(v, BaseModel) else v for v in values)
    return values


# Lean estimates (memory.terms.Breakdown): the changes a recommendation tries, read for
# their totals only. Apart from the full ones, so that an answer never shows a lean one.
_TRIALS: Memo[EstimateResult] = Memo("trial_estimate", 1024)


class _Key:
    """A workload's key (`workload_key`): its values, hashed once (a tuple does not keep
    its hash, while an estimate looks its key up three or four times: peek, get, store),
    and their types, compared only when the values are equal: on a hit, or for values
    equal but not the same (1 and True, a str where the field holds an enum). The tuple of
    types (`type` of ~60 values) was two fifths of a key's cost, and a new question's keys
    almost never meet an equal one."""

    __slots__ = ("value", "hash", "_types")

    def __init__(self, value: tuple) -> None:
        self.value = value
        self.hash = hash(value)
        self._types: tuple[type, ...] | None = None

    def types(self) -> tuple[type, ...]:
        if self._types is None:
            self._types = tuple(map(type, self.value))
        return self._types

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Key)
            and self.hash == other.hash
            and self.value == other.value
            and self.types() == other.types()
        )


def _key(w: Workload) -> Hashable:
    try:
        return _Key((catalog_version(), *_values(w)))
    except TypeError:  # a field holding a list or a dict: by its JSON, as before
        return (catalog_version(), w.model_dump_json())


def estimate(w: Workload) -> EstimateResult:
    """The shared result: change it only on a copy (`dataclasses.replace`)."""
    return _ESTIMATES.get(_key(w), lambda: memory.estimate(w))


def trial_estimate(w: Workload) -> EstimateResult:
    """`estimate(w)` for a caller that reads only its totals (`estimate.total_bytes`,
    `allocated_bytes`, the band's bounds), its runtime, workload, model and assumptions, never
    its terms: the same numbers, about a fifth cheaper when not already estimated in full.
    Such a result must never be shown (its terms have no text)."""
    key = _key(w)
    full = _ESTIMATES.peek(key)
    if full is not None:
        return full
    return _TRIALS.get(key, lambda: memory.estimate(w, lean=True))
