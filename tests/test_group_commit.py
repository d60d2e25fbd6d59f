"""bot.group_commit: a burst of callers shares flushes instead of queueing at a lock, each
returns only after a flush that started after it added its item, errors reach the callers
of the failed flush and its items are tried again, and a cancelled caller stops nothing."""

from __future__ import annotations

import asyncio

import pytest

from bot.group_commit import GroupCommit


class Recorder:
    def __init__(self, fail: int = 0) -> None:
        self.batches: list[list[int]] = []
        self.fail = fail  # how many flushes fail first

    async def flush(self, items: list[int]) -> None:
        await asyncio.sleep(0.01)  # a write on another thread
        if self.fail:
            self.fail -= 1
            raise OSError("disk full (test)")
        self.batches.append(list(items))


async def test_a_burst_takes_two_flushes_not_one_lock_pass_each() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)

    async def late(i: int) -> None:
        await asyncio.sleep(0.001)  # arrives while the first flush runs
        await commit.add(i)

    await asyncio.gather(commit.add(0), *(late(i) for i in range(1, 100)))
    assert commit.flushes == 2
    assert sorted(i for b in rec.batches for i in b) == list(range(100))


async def test_each_caller_returns_after_a_flush_that_started_after_its_add() -> None:
    flushed: set[int] = set()
    started: list[set[int]] = []

    async def flush(items: list[int]) -> None:
        started.append(set(items))
        await asyncio.sleep(0.005)
        flushed.update(items)

    commit = GroupCommit(flush)

    async def one(i: int) -> bool:
        await asyncio.sleep(0.0005 * (i % 7))
        await commit.add(i)
        return i in flushed

    assert all(await asyncio.gather(*(one(i) for i in range(60))))
    assert len(started) < 60


async def test_a_failed_flush_raises_to_its_callers_and_its_items_go_in_the_next() -> None:
    rec = Recorder(fail=1)
    commit = GroupCommit(rec.flush)
    results = await asyncio.gather(commit.add(1), commit.add(2), return_exceptions=True)
    assert all(isinstance(r, OSError) for r in results)
    await commit.add(3)
    assert sorted(rec.batches[0]) == [1, 2, 3]


async def test_a_cancelled_caller_leaves_the_flush_for_the_others() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    first = asyncio.ensure_future(commit.add(1))
    second = asyncio.ensure_future(commit.add(2))
    await asyncio.sleep(0.002)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await second
    assert rec.batches == [[1, 2]]
