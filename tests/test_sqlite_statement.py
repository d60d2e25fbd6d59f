"""SQLiteWorker.statement: one statement as its own transaction, in one handoff: all of it
or none of it, committed when it returns, nothing left open after an error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot.sqlite_worker import SQLiteWorker


async def worker(path: Path) -> SQLiteWorker:
    w = SQLiteWorker(path, "writer")
    await w.open("PRAGMA journal_mode = WAL")
    await w.run(
        lambda db: db.execute_fetchall("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
    )
    return w


async def test_a_statement_is_committed_when_it_returns(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        assert (
            await w.statement("INSERT INTO t (id, v) VALUES (?, ?), (?, ?)", (1, "a", 2, "b")) == 2
        )
        other = sqlite3.connect(tmp_path / "x.sqlite3")
        try:
            assert other.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2
        finally:
            other.close()
        assert await w.statement_rows("INSERT INTO t (v) VALUES (?) RETURNING id", ("c",)) == [(3,)]
    finally:
        await w.close()


async def test_a_failing_statement_changes_nothing_and_leaves_nothing_open(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        await w.statement("INSERT INTO t (id, v) VALUES (?, ?)", (1, "a"))
        with pytest.raises(sqlite3.IntegrityError):
            # the second row breaks NOT NULL: the first of the same statement is not kept
            await w.statement("INSERT INTO t (id, v) VALUES (?, ?), (?, ?)", (2, "b", 3, None))
        other = sqlite3.connect(tmp_path / "x.sqlite3", timeout=1)
        try:
            assert other.execute("SELECT id FROM t").fetchall() == [(1,)]
            other.execute("BEGIN IMMEDIATE")  # the writer holds no lock
            other.execute("COMMIT")
        finally:
            other.close()
        await w.transaction(lambda db: db.execute_fetchall("DELETE FROM t"))  # usable after
    finally:
        await w.close()
