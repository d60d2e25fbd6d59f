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
from pathlib import Path
from typing import TypeVar

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
        async with self._lock:
            return await operation(self._connection())

    async def transaction(self, operation: Operation[T]) -> T:
        """Run `operation` as one BEGIN IMMEDIATE … COMMIT; any error rolls it all back.
        `operation` must fetch what it needs before it returns and return plain values,
        never a cursor."""
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
        COMMIT): those handoffs were most of a small write's cost (bench/load.py profile).
        The lock still keeps it out of another operation's transaction."""
        async with self._lock:
            cursor = await self._connection().execute(sql, params)
            # a statement that returns no rows has run to its end inside execute()
            return cursor.rowcount

    async def statement_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """`statement` for one that returns rows (`INSERT … RETURNING`): they are all
        fetched on the connection's thread, which ends the statement and its implicit
        transaction there."""
        async with self._lock:
            return await rows(self._connection(), sql, params)

    async def close(self) -> None:
        async with self._lock:
            if self._db is not None:
                db, self._db = self._db, None
                await db.close()


async def rows(db: aiosqlite.Connection, sql: str, params: tuple = ()) -> list[tuple]:
    """Every row of one statement, fetched on the connection's thread."""
    return [tuple(r) for r in await db.execute_fetchall(sql, params)]


async def changed(db: aiosqlite.Connection, sql: str, params: tuple = ()) -> int:
    """Run one writing statement to its end; the number of rows it changed."""
    async with db.execute(sql, params) as cursor:
        return cursor.rowcount
