"""SQLiteWorker.statement: one statement as its own transaction, in one handoff: all of it
or none of it, committed when it returns, nothing left open after an error."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from bot.sqlite_worker import SQLiteWorker, changed, rows


async def worker(path: Path) -> SQLiteWorker:
    w = SQLiteWorker(path, "writer")
    await w.open("PRAGMA journal_mode = WAL")
    await w.run(lambda db: changed(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"))
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
        await w.transaction(lambda db: changed(db, "DELETE FROM t"))  # usable after
    finally:
        await w.close()


async def test_statements_asked_together_share_handoffs_and_all_commit(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        before = w.batches_run
        counts = await asyncio.gather(
            *(w.statement("INSERT INTO t (id, v) VALUES (?, ?)", (i, str(i))) for i in range(50))
        )
        assert counts == [1] * 50
        assert w.batches_run - before < 50  # asked in one go: far fewer handoffs than 50
        other = sqlite3.connect(tmp_path / "x.sqlite3")
        try:
            assert other.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 50
        finally:
            other.close()
    finally:
        await w.close()


async def test_a_failing_statement_in_a_shared_handoff_fails_alone(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        results = await asyncio.gather(
            w.statement("INSERT INTO t (id, v) VALUES (?, ?)", (1, "a")),
            w.statement("INSERT INTO t (id, v) VALUES (?, ?), (?, ?)", (2, "b", 3, None)),
            w.statement_rows("INSERT INTO t (v) VALUES (?) RETURNING id", ("c",)),
            return_exceptions=True,
        )
        assert results[0] == 1
        assert isinstance(results[1], sqlite3.IntegrityError)
        assert results[2] == [(2,)]  # the failed statement left no row 2 behind
        ids = await w.run(lambda db: rows(db, "SELECT id FROM t ORDER BY id"))
        assert [tuple(r) for r in ids] == [(1,), (2,)]
    finally:
        await w.close()


async def test_a_transaction_asked_after_statements_sees_them(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        inserts = [
            asyncio.ensure_future(w.statement("INSERT INTO t (id, v) VALUES (?, ?)", (i, "x")))
            for i in range(5)
        ]
        await asyncio.sleep(0)  # the statements are asked (waiting for their handoff)
        seen = await w.transaction(lambda db: rows(db, "SELECT COUNT(*) FROM t"))
        assert next(iter(seen))[0] == 5
        await asyncio.gather(*inserts)
    finally:
        await w.close()


async def test_a_cancelled_caller_leaves_the_others_statements_running(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        first = asyncio.ensure_future(w.statement("INSERT INTO t (id, v) VALUES (1, 'a')"))
        second = asyncio.ensure_future(w.statement("INSERT INTO t (id, v) VALUES (2, 'b')"))
        await asyncio.sleep(0)
        first.cancel()  # the caller that started the batch goes away
        assert await second == 1
        with pytest.raises(asyncio.CancelledError):
            await first
        ids = await w.run(lambda db: rows(db, "SELECT id FROM t ORDER BY id"))
        assert [tuple(r) for r in ids] == [(1,), (2,)]  # asked, so run: as one alone would be
    finally:
        await w.close()


async def test_statements_in_a_transaction_are_all_or_none_in_one_handoff(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    try:
        before = w.batches_run
        assert await w.statements_in_transaction(
            [("INSERT INTO t (id, v) VALUES (1, 'a')", ()), ("UPDATE t SET v = 'b'", ())]
        ) == [1, 1]
        assert w.batches_run - before == 1
        with pytest.raises(sqlite3.IntegrityError):
            await w.statements_in_transaction(
                [
                    ("INSERT INTO t (id, v) VALUES (2, 'c')", ()),
                    ("INSERT INTO t (id, v) VALUES (3, NULL)", ()),  # NOT NULL: all undone
                ]
            )
        stored = await w.run(lambda db: rows(db, "SELECT id, v FROM t ORDER BY id"))
        assert stored == [(1, "b")]
        other = sqlite3.connect(tmp_path / "x.sqlite3", timeout=1)
        try:
            other.execute("BEGIN IMMEDIATE")  # nothing left open by the failed one
            other.execute("COMMIT")
        finally:
            other.close()
    finally:
        await w.close()


async def test_operations_run_on_the_connections_own_thread_in_the_order_asked(
    tmp_path: Path,
) -> None:
    """The event loop's thread never runs SQLite (a blocking call there stalls every chat);
    operations asked one after another run in that order, each whole."""
    w = await worker(tmp_path / "x.sqlite3")
    try:
        threads = await asyncio.gather(
            *(
                w.transaction(
                    lambda db, i=i: (
                        changed(db, "INSERT INTO t (id, v) VALUES (?, ?)", (i, "x")),
                        threading.get_ident(),
                    )[1]
                )
                for i in range(20)
            )
        )
        assert set(threads) != {threading.get_ident()}
        assert len(set(threads)) == 1
        inserted = await w.run(lambda db: rows(db, "SELECT id FROM t ORDER BY rowid"))
        assert inserted == [(i,) for i in range(20)]
    finally:
        await w.close()


async def test_a_closed_worker_refuses_work_and_its_thread_is_gone(tmp_path: Path) -> None:
    w = await worker(tmp_path / "x.sqlite3")
    pending = asyncio.ensure_future(w.statement("INSERT INTO t (id, v) VALUES (1, 'a')"))
    await asyncio.sleep(0)
    await w.close()  # what was asked before the close still runs
    assert await pending == 1
    with pytest.raises(sqlite3.ProgrammingError):
        await w.statement("INSERT INTO t (id, v) VALUES (2, 'b')")
    assert not any(t.name == "sqlite-writer" for t in threading.enumerate())
