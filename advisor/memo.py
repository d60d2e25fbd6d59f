"""Bounded memos for the engine's pure functions (parse, estimate, recommendation, rendered
answer).

Why: lab groups ask the same few questions again and again, and every answer is a pure
function of (catalog, question, language, currency): bench/load.py showed the engine and
the templates as most of the bot's CPU per update. Each memo is a small LRU keyed by
everything its function reads; the catalog is loaded once per process (advisor.catalog's
`@cache`), so its version stamp is part of every key only as a guard, while an operator's
price file, which is re-read on every call, is keyed by its path, size and mtime.

Values are shared between callers: treat them as read-only (every caller copies before
changing one: `model_copy(update=...)` for a model, `dataclasses.replace` for the engine's
dataclass rows). tests/test_memo.py checks that
answers are byte-identical with the memos on and off.

`ADVISOR_MEMO=0` in the environment (or `set_enabled(False)`) turns every memo off.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, TypeVar

V = TypeVar("V")

_ENABLED = os.environ.get("ADVISOR_MEMO", "1") != "0"
_ALL: list[Memo] = []


class Memo(Generic[V]):
    """A least-recently-used map of at most `size` entries, with hit and miss counts."""

    def __init__(self, name: str, size: int, *, table: bool = False) -> None:
        """`table`: a per-card table (prices, what fits a card), not a per-question result."""
        self.name = name
        self.size = size
        self.table = table
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        _ALL.append(self)

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        if not _ENABLED:
            return compute()
        data = self._data
        try:
            value = data[key]
        except KeyError:
            self.misses += 1
            value = compute()
            data[key] = value
            if len(data) > self.size:
                data.popitem(last=False)
            return value
        self.hits += 1
        data.move_to_end(key)
        return value

    def peek(self, key: Hashable) -> V | None:
        """The value kept for `key`, or None; counts nothing and leaves the order as is."""
        return self._data.get(key) if _ENABLED else None

    def clear(self) -> None:
        self._data.clear()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)


class ByIdentity(Memo[tuple[object, V]]):
    """Facts derived from one shared, read-only object (an estimate a recommendation judges
    on every card), by the object itself: the entry holds the object, so its id cannot be
    reused while the entry lives, and a hit checks it is the same object. Oldest out first
    (no reordering on a hit: the facts of one question are read in a burst)."""

    def of(self, obj: object, compute: Callable[[], V]) -> V:
        if not _ENABLED:
            return compute()
        data = self._data
        entry = data.get(id(obj))
        if entry is not None and entry[0] is obj:
            self.hits += 1
            return entry[1]
        self.misses += 1
        value = compute()
        data[id(obj)] = (obj, value)
        if len(data) > self.size:
            data.popitem(last=False)
        return value


def set_enabled(on: bool) -> None:
    """Turn every memo on or off (tests compare the two; off also empties them)."""
    global _ENABLED
    _ENABLED = on
    if not on:
        clear_all()


def clear_all() -> None:
    for memo in _ALL:
        memo.clear()


def clear_questions() -> None:
    """Forget every per-question result, keep the per-card tables: what a question never
    asked before costs (bench/speed.py)."""
    for memo in _ALL:
        if not memo.table:
            memo.clear()


def stats() -> dict[str, tuple[int, int, int]]:
    """name -> (entries, hits, misses)."""
    return {m.name: (len(m), m.hits, m.misses) for m in _ALL}


def prices_key(path: Path | None) -> Hashable:
    """What an answer's prices depend on: the packaged list (loaded once), or an operator's
    file as it is now (catalog.load_prices reads it on every call, so an edit must show)."""
    if path is None:
        return None
    try:
        st = Path(path).stat()
    except OSError:
        return (str(path), None)  # the load itself will fail as it would uncached
    return (str(path), st.st_size, st.st_mtime_ns)
