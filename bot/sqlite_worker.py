"""One SQLite connection (aiosqlite) whose operations run one at a time: the write
discipline of the whole process.

aiosqlite runs the standard library's blocking `sqlite3` on a thread of its own and hands
each statement over from the event loop. On one shared connection, two coroutines that both
await statements interleave them ("cannot start a transaction within a transaction", a
COMMIT that ends the other's work). So every use of the connection is an *operation*: an
async function of the `aiosqlite.Connection` that runs from its first statement to its last
with the connection to itself (an asyncio.Lock, first come first served, so operations run
in the order they were asked for) and returns plain values (rows fetched, counts), never a
cursor. A caller cancelled mid-operation does not cut it short: the operation runs to its
end (its COMMIT or ROLLBACK) and only the caller stops waiting, so no transaction is ever
left open on the shared connection.

Only aiosqlite's public API is used (connect, execute, execute_fetchall, executescript,
in_transaction, close).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

T = TypeVar("T")
Operation = Callable[[aiosqlite.Connection], Awaitable[T]]
Params = Sequence[Any]

BUSY_TIMEOUT_MS = 5000


class SQLiteWorker:
    """A connection whose operations run one at a time, in the order they were asked for."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._db: aiosqlite.Connection | None = None
        self._turn = asyncio.Lock()
        self._running: set[asyncio.Task[Any]] = set()  # operations not yet settled

    async def open(self, *pragmas: str) -> None:
        """Connect and run `pragmas` on the new connection."""
        # isolation_level=None: Python's sqlite3 opens no transaction behind our back;
        # `_in_transaction` is the only place one begins.
        db = await aiosqlite.connect(
            self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
        )
        try:
            for pragma in pragmas:
                await rows(db, pragma)
        except BaseException:
            await db.close()
            raise
        self._db = db

    # --- what callers ask for --------------------------------------------------------------

    async def run(self, operation: Operation[T]) -> T:
        """Run `operation(connection)` with the connection to itself, outside any transaction."""
        return await self._submit(operation)

    async def transaction(self, operation: Operation[T]) -> T:
        """Run `operation` as one BEGIN IMMEDIATE … COMMIT; any error rolls it all back."""
        return await self._submit(lambda db: _in_transaction(operation, db))

    async def statement(self, sql: str, params: Params = ()) -> int:
        """One writing statement alone, as its own transaction; the rows it changed.

        Outside BEGIN … COMMIT, SQLite runs a statement in an implicit transaction of its
        own: all of it or none of it, committed (with the connection's synchronous setting)
        before it returns, rolled back by SQLite itself on any error, so nothing is left
        open: the guarantees of `transaction` for one statement, with two fewer statements."""
        return await self._submit(lambda db: changed(db, sql, params))

    async def statements_in_transaction(self, items: Sequence[tuple[str, Params]]) -> list[int]:
        """A few writing statements as one BEGIN IMMEDIATE … COMMIT (all or none); the rows
        each changed."""

        async def each(db: aiosqlite.Connection) -> list[int]:
            return [await changed(db, sql, params) for sql, params in items]

        return await self.transaction(each)

    async def statement_rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row of one statement (`INSERT … RETURNING`, or a read on the reader's
        connection); fetching them all ends the statement and its implicit transaction."""
        return await self._submit(lambda db: rows(db, sql, params))

    async def close(self) -> None:
        """Let what was asked for run, then close the connection (aiosqlite ends its thread)."""
        if self._db is None:
            return
        db, self._db = self._db, None  # nothing new is accepted
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
        await db.close()

    # --- one at a time ----------------------------------------------------------------------

    async def _submit(self, operation: Operation[T]) -> T:
        db = self._db
        if db is None:
            raise sqlite3.ProgrammingError("the database connection is closed")
        task = asyncio.ensure_future(self._in_turn(operation, db))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        # a cancelled caller stops waiting; the operation runs to its end all the same
        return await asyncio.shield(task)

    async def _in_turn(self, operation: Operation[T], db: aiosqlite.Connection) -> T:
        async with self._turn:
            return await operation(db)


async def _in_transaction(operation: Operation[T], db: aiosqlite.Connection) -> T:
    await changed(db, "BEGIN IMMEDIATE")
    try:
        result = await operation(db)
        await changed(db, "COMMIT")
    except BaseException:
        # COMMIT itself can fail (disk full): never leave the transaction open
        with contextlib.suppress(sqlite3.OperationalError):  # none left to roll back
            await changed(db, "ROLLBACK")
        raise
    return result


async def rows(db: aiosqlite.Connection, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
    """Every row of one statement; fetching them all ends it (and closes its cursor)."""
    return [tuple(r) for r in await db.execute_fetchall(sql, params)]


async def changed(db: aiosqlite.Connection, sql: str, params: Params = ()) -> int:
    """Run one writing statement to its end; the number of rows it changed."""
    async with db.execute(sql, params) as cursor:
        return cursor.rowcount
