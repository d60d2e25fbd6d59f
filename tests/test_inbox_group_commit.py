"""The inbox deletes by group commit (bot.inbox runs Repository.inbox_delete through
bot.group_commit): updates finished together are deleted together, each caller returns only
once its own row is gone, and a failed delete is tried again by the next."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.group_commit import GroupCommit
from bot.storage import Repository


def updates(ids: range) -> list[dict]:
    return [{"update_id": i, "message": {"text": f"q{i}"}} for i in ids]


async def test_many_updates_finishing_at_once_leave_no_row(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "x.sqlite3")
    try:
        await repo.inbox_add(updates(range(1, 301)))
        deletes: list[int] = []

        async def counting(ids: list[int]) -> None:
            deletes.append(len(ids))
            await repo.inbox_delete(ids)

        commit = GroupCommit(counting)
        await asyncio.gather(*(commit.add(i) for i in range(1, 301)))
        assert await repo.inbox_pending() == []
        assert sum(deletes) == 300  # each row deleted once…
        assert len(deletes) < 300  # …in fewer writes than updates
    finally:
        await repo.close()


async def test_each_caller_returns_after_its_own_row_is_committed(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "x.sqlite3")
    try:
        await repo.inbox_add(updates(range(1, 41)))

        commit = GroupCommit(repo.inbox_delete)

        async def done_then_check(i: int) -> bool:
            await commit.add(i)
            return all(u["update_id"] != i for u in await repo.inbox_pending())

        assert all(await asyncio.gather(*(done_then_check(i) for i in range(1, 41))))
    finally:
        await repo.close()


async def test_a_failed_delete_is_tried_again_by_the_next_caller(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "x.sqlite3")
    try:
        await repo.inbox_add(updates(range(1, 4)))
        fail = [True]

        async def flaky(ids: list[int]) -> None:
            if fail.pop() if fail else False:
                raise OSError("disk full (test)")
            await repo.inbox_delete(ids)

        commit = GroupCommit(flaky)
        with pytest.raises(OSError):
            await commit.add(1)
        await commit.add(2)
        assert [u["update_id"] for u in await repo.inbox_pending()] == [3]
    finally:
        await repo.close()
