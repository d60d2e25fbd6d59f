"""Group commit without a lock convoy.

Each handled update ends with two writes that many updates share: PTB's persistence flush
and the inbox delete. Both were guarded by an asyncio.Lock that every update passed in turn,
and asyncio hands a released lock to the next waiter one loop iteration later: N updates
finishing together took N iterations to drain the queue, most of them finding their work
already done by an earlier flush, while the loop ran everything else in between. Under
load the queue grew, and with it the time each update waited (bench/load.py: every update's
task suspended at both locks).

Here a caller adds its item and waits for the first flush that *starts after* it added it,
the only guarantee it needs (its data marked, its id set). One task runs the flushes one at
a time; all items added while one runs go to the next, so a burst of N updates costs two
flushes and every caller wakes as soon as its own is done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class GroupCommit(Generic[T]):
    """`await add(item)` returns once a `flush(items)` that included `item` has finished,
    and raises what that flush raised. A failed flush's items go to the next flush too: a
    later caller tries them again."""

    def __init__(self, flush: Callable[[list[T]], Awaitable[object]]) -> None:
        self._flush = flush
        self._items: list[T] = []
        self._next: asyncio.Future[None] | None = None  # the flush not yet started
        self._runner: asyncio.Task[None] | None = None
        self.flushes = 0  # flushes run (tests, bench)

    async def add(self, item: T) -> None:
        # shielded: a caller cancelled meanwhile leaves the flush running for the others
        await asyncio.shield(self.submit(item))

    def submit(self, item: T) -> asyncio.Future[None]:
        """`add` without waiting: the future of the flush that will include `item`."""
        self._items.append(item)
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        if self._runner is None:
            self._runner = asyncio.create_task(self._run())
        return self._next

    async def drain(self) -> None:
        """Return once every item submitted so far is flushed (or its flush failed)."""
        while self._runner is not None:
            await asyncio.wait([self._runner])

    async def _run(self) -> None:
        try:
            while self._next is not None:
                done, self._next = self._next, None
                items, self._items = self._items, []
                self.flushes += 1
                try:
                    await self._flush(items)
                except BaseException as exc:
                    self._items[:0] = items  # tried again by the next flush
                    if isinstance(exc, asyncio.CancelledError):
                        done.cancel()
                        raise
                    done.set_exception(exc)
                    done.exception()  # retrieved here: every caller may have been cancelled
                else:
                    done.set_result(None)
        finally:
            self._runner = None
            if self._next is not None:  # cancelled with callers waiting for the next flush
                self._next.cancel()
                self._next = None
