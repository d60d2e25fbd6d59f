"""One write discipline: many handlers writing through one Repository at once never leave
a transaction open, never lose a write, and never keep the file locked."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from bot.storage import Repository

WRITERS = 100
ROUNDS = 10
FORGOTTEN = range(900, 920)


async def _add(repo: Repository, user_id: int, update_id: int) -> None:
    await repo.add_history(
        user_id=user_id,
        chat_id=user_id,
        raw_text=f"q{update_id}",
        canonical=None,
        workload=None,
        summary=None,
        catalog_version="v",
        update_id=update_id,
    )


async def test_concurrent_history_inbox_and_forget_all_commit_and_release_the_file(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.sqlite3"
    repo = await Repository.open(db)

    async def asker(i: int) -> None:  # questions back to back, as a busy handler pool does
        for k in range(ROUNDS):
            await _add(repo, i, 1_000_000 + i * 100 + k)

    async def receiver(i: int) -> None:  # the inbox and PTB state of the same updates
        for k in range(5):
            update_id = i * 10 + k
            await repo.inbox_add([{"update_id": update_id}])
            await repo.seen(i, f"u{i}", "en", i, "private", None)
            await repo.save_state_json("user_data", str(i), json.dumps({"k": k}))
            await repo.inbox_delete([update_id])

    async def forgetter(user_id: int) -> None:
        # /forget confirmed again and again while everyone else writes
        for k in range(5):
            await repo.seen(user_id, "f", "en", user_id, "private", None)
            await _add(repo, user_id, 100_000 + user_id * 10 + k)
            await repo.save_state_json("user_data", str(user_id), json.dumps({"task": "llm"}))
            await repo.forget_user(user_id)

    results = await asyncio.gather(
        *(asker(i) for i in range(WRITERS)),
        *(receiver(i) for i in range(WRITERS)),
        *(forgetter(u) for u in FORGOTTEN),
        return_exceptions=True,
    )
    assert [r for r in results if r is not None] == []

    # A second connection sees every write, while the repository is still open.
    other = sqlite3.connect(db, timeout=1)
    try:
        assert other.execute("SELECT COUNT(*) FROM history").fetchone()[0] == WRITERS * ROUNDS
        assert other.execute("SELECT COUNT(*) FROM inbox").fetchone()[0] == 0
        states = other.execute("SELECT COUNT(*) FROM ptb_state").fetchone()[0]
        assert states == WRITERS
        for table, column in (("users", "user_id"), ("history", "user_id")):
            left = other.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {column} BETWEEN ? AND ?",
                (FORGOTTEN[0], FORGOTTEN[-1]),
            ).fetchone()[0]
            assert left == 0, table
        other.execute("BEGIN IMMEDIATE")  # nobody holds the write lock
        other.execute("INSERT INTO inbox VALUES (1, '{}', 'now')")
        other.execute("COMMIT")
    finally:
        other.close()
    await repo.close()


async def test_cancelled_writers_leave_no_transaction_open(tmp_path: Path) -> None:
    """A handler cancelled mid-write (shutdown, a timeout) rolls its transaction back; the
    next write and another connection's write lock both go through."""
    db = tmp_path / "x.sqlite3"
    repo = await Repository.open(db)
    tasks = [asyncio.create_task(_add(repo, i, 5_000 + i)) for i in range(200)]
    for k, task in enumerate(tasks):
        if k % 3 == 0:
            await asyncio.sleep(0)  # let some get into their transaction first
        if k % 2:
            task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(r is None or isinstance(r, asyncio.CancelledError) for r in results)
    done = sum(r is None for r in results)

    await _add(repo, 1, 99_999)
    other = sqlite3.connect(db, timeout=1)
    try:
        # every write reported done is there; the cancelled ones are there at most once
        stored = other.execute("SELECT COUNT(*) FROM history").fetchone()[0]
        assert done + 1 <= stored <= len(tasks) + 1
        other.execute("BEGIN IMMEDIATE")
        other.execute("COMMIT")
    finally:
        other.close()
    await repo.close()
