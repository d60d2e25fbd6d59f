"""Python's cyclic garbage collector, tuned for a long-running bot process.

Why: every update allocates thousands of short-lived objects (PTB's Update, Message and
keyboard objects, aiohttp requests, pydantic models), and with CPython's default thresholds
(700, 10, 10) the collector ran ~350 young and ~32 middle collections in a 20 s load-bench
run, 0.47 s of the event loop's 10.4 s of CPU (4.5%, measured with gc.callbacks and
time.thread_time, 2026-12-01). Two standard changes (the Python docs' `gc.freeze`, as
Instagram described for its servers in 2017):

- `gc.freeze()` once start-up is done: the modules, catalogs, compiled templates and parser
  patterns loaded by then are never traversed again by a full collection;
- a young-generation threshold of 20 000 allocations instead of 700, and older ones
  collected less often: the same run then spent 0.15 s (1.3%) in 10 collections, with
  peak RSS 141 MB against 136 MB (the load bench's bar is 200 MB).

Reference cycles are still collected, only in larger batches; nothing here turns the
collector off. Applied by `bot.runner.serve` (the real process), not in tests.

The generations are also collected at a pace set by updates handled (`Pacer`).
CPython starts a young collection when allocations minus deallocations pass the threshold,
and a deallocation of an *old* object counts too: once the memos are full, each new entry
(young) evicts an old one, the count stands still while the young generation grows, and each
young collection traverses more. In a 20 s bench/load.py run the young generation at a
collection grew from 20 557 objects to 84 244, and its pause from 4 to 39 ms (68 ms in
another run), the longest callbacks of the loop (gc.callbacks probe, 2026-12-01). Paced by
updates, the young generation holds what fifty updates leave behind, whatever the memos
evict.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

# (young, middle, old): collections of each generation, see gc.set_threshold
THRESHOLDS = (20_000, 20, 40)
# Pacer: updates handled between two collections of the young generation, young
# collections between two of the middle one, and the least time between full collections.
YOUNG_EVERY_UPDATES = 50
MIDDLE_EVERY_YOUNG = 5
FULL_EVERY_S = 300.0


def settle_after_start_up() -> None:
    """Called once the bot has loaded everything it keeps for its whole life."""
    gc.collect()  # what start-up left as garbage goes now, not into the frozen generation
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


class Pacer:
    """Collects the young generation every `young_every` ticks (one per update handled), the
    middle one every `middle_every` young collections, and everything at most once every
    `full_every_s` seconds, at the first middle collection due after that.

    A collection's pause is about its generation's size (~0.4 µs an object here): paced by
    updates, the young generation holds what `young_every` updates leave alive (~5 000
    objects, a few ms) and the middle one what `middle_every` young collections promoted.
    With CPython's own middle threshold (20 young collections) a middle collection paused
    79 ms. The full collection traverses every object not frozen (the memos' entries among
    them): spaced by time, a pause of tens of ms at most once in five minutes.
    The allocation thresholds stay as a backstop for work that is not an update.
    `collect` and `clock` are gc.collect and time.monotonic, replaceable in tests."""

    def __init__(
        self,
        young_every: int = YOUNG_EVERY_UPDATES,
        middle_every: int = MIDDLE_EVERY_YOUNG,
        full_every_s: float = FULL_EVERY_S,
        collect: Callable[[int], object] = gc.collect,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.young_every = young_every
        self.middle_every = middle_every
        self.full_every_s = full_every_s
        self._collect = collect
        self._clock = clock
        self._ticks = 0
        self._young = 0
        self._last_full = clock()

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks < self.young_every:
            return
        self._ticks = 0
        self._young += 1
        if self._young < self.middle_every:
            self._collect(0)
            return
        self._young = 0
        now = self._clock()
        if now - self._last_full >= self.full_every_s:
            self._last_full = now
            self._collect(2)
        else:
            self._collect(1)
