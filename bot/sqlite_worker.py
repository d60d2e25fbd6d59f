"""One SQLite connection owned by one thread: the write discipline of the whole process.

Why not a shared async connection: with aiosqlite every statement is its own hop to the
connection's thread, so a handler's `INSERT … RETURNING` could stay open between execute
and fetch while another handler ran BEGIN or COMMIT on the same connection ("cannot start
a transaction within a transaction", "SQL statements in progress"), and one failed COMMIT
left a transaction open for good (issue 14). Here an operation is a plain function over a
`sqlite3.Connection`; the worker runs it to the end, results fetched, before it starts the
next one, and `transaction` wraps it in BEGIN IMMEDIATE … COMMIT. No statement, and no
transaction, can stay open across an `await`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000


class SQLiteWorker:
    """A connection and its one thread. Operations run one at a time, in submission order."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sqlite-{name}")
        self._conn: sqlite3.Connection | None = None

    async def open(self, *pragmas: str) -> None:
        def connect() -> None:
            # isolation_level=None: Python's sqlite3 opens no transaction behind our back;
            # `transaction` below is the only place one begins.
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
            try:
                for pragma in pragmas:
                    conn.execute(pragma).fetchall()
            except BaseException:
                conn.close()
                raise
            self._conn = conn

        await self.run(lambda _conn: None, connect=connect)

    async def run(
        self,
        operation: Callable[[sqlite3.Connection], T],
        *,
        connect: Callable[[], None] | None = None,
    ) -> T:
        """Run `operation(connection)` on the worker's thread, outside any transaction."""

        def job() -> T:
            if connect is not None:
                connect()
            if self._conn is None:
                raise sqlite3.ProgrammingError("the database connection is closed")
            return operation(self._conn)

        return await asyncio.get_running_loop().run_in_executor(self._executor, job)

    async def transaction(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run `operation` as one BEGIN IMMEDIATE … COMMIT; any error rolls it all back.
        `operation` must fetch what it needs (fetchall) before it returns, and return plain
        values, never a cursor: a cursor finalized later on another thread would reset a
        cached statement this thread is using ("bad parameter or other API misuse")."""

        def in_transaction(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = operation(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # COMMIT itself can fail (disk full): never leave it open
                    conn.execute("ROLLBACK")
                raise
            return result

        return await self.run(in_transaction)

    async def close(self) -> None:
        def close(conn: sqlite3.Connection) -> None:
            conn.close()
            self._conn = None

        try:
            if self._conn is not None:
                await self.run(close)
        finally:
            self._executor.shutdown(wait=True)
