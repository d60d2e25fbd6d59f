"""One aiosqlite connection and one lock: the write discipline of the whole process.

aiosqlite runs each call on the connection's own thread, one call at a time, but between two
calls any other task may run. Shared freely, one handler's `INSERT … RETURNING` could stay
open between execute and fetch while another handler ran BEGIN or COMMIT on the same
connection ("cannot start a transaction within a transaction", "SQL statements in
progress"), and one failed COMMIT left a transaction open for good (issue 14). Here an
operation is an async function over the connection; the worker's lock lets one operation
run at a time, from its first statement to its last, and `transaction` wraps it in
BEGIN IMMEDIATE … COMMIT (ROLLBACK on any error, cancellation included). Operations fetch
their rows (`execute_fetchall`) or close their cursor (`async with`) before they return, so
no statement stays open once the lock is released.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

T = TypeVar("T")
Operation = Callable[[aiosqlite.Connection], Awaitable[T]]

BUSY_TIMEOUT_MS = 5000


class SQLiteWorker:
    """A connection whose operations run one at a time, in the order they were asked for."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()
        self._open: _Batch | None = None  # statements waiting for their handoff
        self.batches_run = 0  # handoffs that ran statements (tests, bench)

    async def open(self, *pragmas: str) -> None:
        # isolation_level=None: Python's sqlite3 opens no transaction behind our back;
        # `transaction` below is the only place one begins.
        db = await aiosqlite.connect(
            self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
        )
        try:
            for pragma in pragmas:
                await db.execute_fetchall(pragma)
        except BaseException:
            await db.close()
            raise
        self._db = db

    def _connection(self) -> aiosqlite.Connection:
        if self._db is None:
            raise sqlite3.ProgrammingError("the database connection is closed")
        return self._db

    async def run(self, operation: Operation[T]) -> T:
        """Run `operation(connection)` alone on the connection, outside any transaction."""
        await self._after_batch()
        async with self._lock:
            return await operation(self._connection())

    async def transaction(self, operation: Operation[T]) -> T:
        """Run `operation` as one BEGIN IMMEDIATE … COMMIT; any error rolls it all back.
        `operation` must fetch what it needs before it returns and return plain values,
        never a cursor."""
        await self._after_batch()
        async with self._lock:
            db = self._connection()
            await db.execute_fetchall("BEGIN IMMEDIATE")
            try:
                result = await operation(db)
                await db.execute_fetchall("COMMIT")
            except BaseException:
                # COMMIT itself can fail (disk full): never leave the transaction open. The
                # ROLLBACK is queued behind whatever statement the operation had in flight.
                with contextlib.suppress(sqlite3.OperationalError):  # none left to roll back
                    await db.execute_fetchall("ROLLBACK")
                raise
            return result

    async def statement(self, sql: str, params: tuple = ()) -> int:
        """One writing statement alone, as its own transaction; the rows it changed.

        Outside BEGIN … COMMIT, SQLite runs a statement in an implicit transaction of its
        own: all of it or none of it, committed (with the connection's synchronous setting)
        before it returns, rolled back by SQLite itself on any error, so nothing is left
        open. The same guarantees as `transaction` for one statement, in one handoff to the
        connection's thread instead of four (BEGIN, the statement, closing its cursor,
        COMMIT). Statements asked for while the connection is busy share the next handoff
        (`_batched`): each still its own implicit transaction, run in the order asked, its
        caller returning once it is committed; a handoff costs ~90 us of CPU where a
        statement in a shared one costs ~25 (bench/load.py counted ~3 a handled update)."""
        return await self._batched(partial(_one_statement, sql, params, False))

    async def statements_in_transaction(self, items: list[tuple[str, tuple]]) -> list[int]:
        """A few writing statements as one BEGIN IMMEDIATE … COMMIT (all or none; ROLLBACK
        on any error), in one handoff shared like `statement`'s: where `transaction` makes
        one handoff per statement plus BEGIN and COMMIT. The rows each changed."""
        return await self._batched(partial(_in_transaction, items))

    async def statement_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """`statement` for one that returns rows (`INSERT … RETURNING`, or a read on the
        reader's connection): they are all fetched on the connection's thread, which ends
        the statement and its implicit transaction there. Reads share handoffs like writes:
        one at a time through `run`, each reader waited at the lock for the one before it
        and was woken a loop iteration after its release, and when 200 members came at once
        (their language and lab machines not cached yet) the last waited ~130 ms
        (bench/load.py, a loop-callback probe)."""
        return await self._batched(partial(_one_statement, sql, params, True))

    async def _batched(self, operation: Callable[[sqlite3.Connection], Any]) -> Any:
        """Join the batch not yet started (or start one): it runs once the lock is free,
        as one call on the connection's thread. Every caller waits on the batch shielded,
        so a caller cancelled meanwhile leaves the others' statements running."""
        batch = self._open
        if batch is None:
            batch = self._open = _Batch()
            batch.task = asyncio.ensure_future(self._run_batch(batch))
        index = len(batch.items)
        batch.items.append(operation)
        assert batch.task is not None
        result = (await asyncio.shield(batch.task))[index]
        if isinstance(result, BaseException):
            raise result
        return result

    async def _run_batch(self, batch: _Batch) -> list[Any]:
        async with self._lock:
            if self._open is batch:
                self._open = None  # statements asked from now on go to the next batch
            db = self._connection()
            self.batches_run += 1
            # aiosqlite runs any function on its thread through `_execute` (what its own
            # execute() does); its public calls are one statement per handoff
            return await db._execute(_run_statements, db._conn, batch.items)

    async def _after_batch(self) -> None:
        """Let the statements asked for before this operation run first."""
        batch, self._open = self._open, None
        if batch is not None and batch.task is not None:
            with contextlib.suppress(Exception):  # their callers get their own errors
                await asyncio.shield(batch.task)

    async def close(self) -> None:
        await self._after_batch()
        async with self._lock:
            if self._db is not None:
                db, self._db = self._db, None
                await db.close()


class _Batch:
    """Operations asked for while the connection was busy, each a function of the sqlite3
    connection, run on its thread in the order asked."""

    __slots__ = ("items", "task")

    def __init__(self) -> None:
        self.items: list[Callable[[sqlite3.Connection], Any]] = []
        self.task: asyncio.Future[list[Any]] | None = None


def _run_statements(
    conn: sqlite3.Connection, items: list[Callable[[sqlite3.Connection], Any]]
) -> list[Any]:
    """On the connection's thread: each operation's result, or the error it raised (for its
    caller alone: the others run as they would have)."""
    out: list[Any] = []
    for operation in items:
        try:
            out.append(operation(conn))
        except Exception as exc:  # noqa: BLE001 - handed to that operation's caller
            out.append(exc)
    return out


def _one_statement(sql: str, params: tuple, fetch: bool, conn: sqlite3.Connection) -> Any:
    """Outside BEGIN … COMMIT: its own implicit transaction, committed or rolled back before
    the next starts. Its rows (fetched: that ends it) or its changed-row count."""
    cursor = conn.execute(sql, params)
    try:
        return [tuple(r) for r in cursor.fetchall()] if fetch else cursor.rowcount
    finally:
        cursor.close()


def _in_transaction(items: list[tuple[str, tuple]], conn: sqlite3.Connection) -> list[int]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        counts = [_one_statement(sql, params, False, conn) for sql, params in items]
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.OperationalError):  # none left to roll back
            conn.execute("ROLLBACK")
        raise
    return counts


async def rows(db: aiosqlite.Connection, sql: str, params: tuple = ()) -> list[tuple]:
    """Every row of one statement, fetched on the connection's thread."""
    return [tuple(r) for r in await db.execute_fetchall(sql, params)]


async def changed(db: aiosqlite.Connection, sql: str, params: tuple = ()) -> int:
    """Run one writing statement to its end; the number of rows it changed."""
    async with db.execute(sql, params) as cursor:
        return cursor.rowcount
