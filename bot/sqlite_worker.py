"""One SQLite connection on a thread of its own: the write discipline of the whole process.

The standard library's `sqlite3` blocks, so each connection lives on its own thread and the
event loop hands it work: an *operation*, a plain function of the `sqlite3.Connection` that
runs there from its first statement to its last and returns plain values (rows fetched,
counts), never a cursor. Operations run one at a time, in the order they were asked for, and
no other operation can run between two statements of one, so the interleavings a shared
async connection allowed ("cannot start a transaction within a transaction", "SQL statements
in progress", a COMMIT that failed and left a transaction open for good) cannot happen: there is no `await` inside
an operation.

Handing work to the thread and waking the loop afterwards costs more CPU than a short
statement itself (~90 us against ~25, bench/load.py counted ~3 statements per handled
update), so operations asked for while the thread is busy wait and go over together, as one
*batch*, as soon as it is free. Each operation in a batch is still its own unit: its own
transaction (`transaction`) or its own implicit one (`statement`), its own result or error
for its caller alone.

The thread is a plain `threading.Thread` with a queue, what aiosqlite does inside; its public
API hands over one statement at a time, and a batch of them is what keeps the handoffs down.
Measured with aiosqlite's public API in its place (one operation at a time under a lock,
each statement its own handoff): tests/test_durability.py (150 updates/s, 8 SIGKILLs) took
39 s where this takes 24 s, and in 5 of 7 runs a wizard press outlived its answer window
and went unanswered; here 0 of 3.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
Operation = Callable[[sqlite3.Connection], T]
Params = Sequence[Any]

BUSY_TIMEOUT_MS = 5000


class SQLiteWorker:
    """A connection whose operations run one at a time, in the order they were asked for."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # batches for the thread; None tells it to close the connection and end
        self._batches: queue.SimpleQueue[list[_Job] | None] = queue.SimpleQueue()
        self._waiting: list[_Job] = []  # asked for while a batch was on the thread
        self._busy = False  # a batch is on the thread, or about to be handed over
        self._closing = False  # the thread ends once the last batch is settled
        self._closed: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.batches_run = 0  # handoffs to the thread (tests, bench)

    async def open(self, *pragmas: str) -> None:
        """Connect on the worker's own thread and run `pragmas` there."""
        self._loop = asyncio.get_running_loop()
        opened: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._serve, args=(pragmas, opened), name=f"sqlite-{self.name}", daemon=True
        )
        self._thread.start()
        try:
            await asyncio.wrap_future(opened)
        except BaseException:
            self._thread = None
            raise

    # --- what callers ask for --------------------------------------------------------------

    async def run(self, operation: Operation[T]) -> T:
        """Run `operation(connection)` on the connection's thread, outside any transaction."""
        return await self._submit(operation)

    async def transaction(self, operation: Operation[T]) -> T:
        """Run `operation` as one BEGIN IMMEDIATE … COMMIT; any error rolls it all back."""
        return await self._submit(lambda connection: _in_transaction(operation, connection))

    async def statement(self, sql: str, params: Params = ()) -> int:
        """One writing statement alone, as its own transaction; the rows it changed.

        Outside BEGIN … COMMIT, SQLite runs a statement in an implicit transaction of its
        own: all of it or none of it, committed (with the connection's synchronous setting)
        before it returns, rolled back by SQLite itself on any error, so nothing is left
        open: the guarantees of `transaction` for one statement, with two fewer statements."""
        return await self._submit(lambda connection: changed(connection, sql, params))

    async def statements_in_transaction(self, items: Sequence[tuple[str, Params]]) -> list[int]:
        """A few writing statements as one BEGIN IMMEDIATE … COMMIT (all or none); the rows
        each changed."""
        return await self.transaction(
            lambda connection: [changed(connection, sql, params) for sql, params in items]
        )

    async def statement_rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row of one statement (`INSERT … RETURNING`, or a read on the reader's
        connection), fetched on the connection's thread, which ends the statement and its
        implicit transaction there. Reads share handoffs as writes do: when 200 members came
        at once (their language and lab machines not cached yet), one handoff each made the
        last wait ~130 ms (bench/load.py, a loop-callback probe)."""
        return await self._submit(lambda connection: rows(connection, sql, params))

    async def close(self) -> None:
        """Run what was asked for, then close the connection and end the thread."""
        if self._thread is None:
            return
        thread, self._thread = self._thread, None  # nothing new is accepted
        self._closing = True
        if not self._busy:  # else `_settle` ends the thread once what was asked has run
            self._batches.put(None)
        await asyncio.wrap_future(self._closed)
        thread.join()

    # --- the loop's side of the handoff -----------------------------------------------------

    def _submit(self, operation: Operation[T]) -> asyncio.Future[T]:
        if self._thread is None or self._loop is None:
            raise sqlite3.ProgrammingError("the database connection is closed")
        future: asyncio.Future[T] = self._loop.create_future()
        self._waiting.append(_Job(operation, future))
        if not self._busy:
            self._busy = True
            # on the next loop turn: the operations asked for in this one go over with it
            self._loop.call_soon(self._hand_over)
        return future

    def _hand_over(self) -> None:
        batch, self._waiting = self._waiting, []
        self.batches_run += 1
        self._batches.put(batch)

    def _settle(self, batch: list[_Job], outcomes: list[tuple[bool, Any]]) -> None:
        """On the loop: each caller gets its own result or error, then what was asked for
        meanwhile goes to the thread."""
        for job, (ok, value) in zip(batch, outcomes, strict=True):
            if job.future.done():  # its caller was cancelled; the operation ran all the same
                continue
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(value)
        if self._waiting:
            self._hand_over()
        else:
            self._busy = False
            if self._closing:
                self._batches.put(None)

    # --- the connection's thread ------------------------------------------------------------

    def _serve(self, pragmas: tuple[str, ...], opened: concurrent.futures.Future[None]) -> None:
        try:
            # isolation_level=None: Python's sqlite3 opens no transaction behind our back;
            # `_in_transaction` is the only place one begins.
            connection = sqlite3.connect(
                self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
            )
        except BaseException as exc:
            opened.set_exception(exc)
            return
        try:
            try:
                for pragma in pragmas:
                    rows(connection, pragma)
            except BaseException as exc:
                opened.set_exception(exc)
                return
            opened.set_result(None)
            assert self._loop is not None
            while (batch := self._batches.get()) is not None:
                outcomes = [_outcome(job.operation, connection) for job in batch]
                try:
                    self._loop.call_soon_threadsafe(self._settle, batch, outcomes)
                except RuntimeError:  # the loop is closed: nobody is waiting any more
                    break
        finally:
            connection.close()
            self._closed.set_result(None)


class _Job:
    __slots__ = ("future", "operation")

    def __init__(self, operation: Operation[Any], future: asyncio.Future[Any]) -> None:
        self.operation = operation
        self.future = future


def _outcome(operation: Operation[Any], connection: sqlite3.Connection) -> tuple[bool, Any]:
    """On the connection's thread: (True, result) or (False, the error), for that operation's
    caller alone; the others in the batch run as they would have."""
    try:
        return True, operation(connection)
    except BaseException as exc:  # noqa: BLE001 - handed to that operation's caller
        return False, exc


def _in_transaction(operation: Operation[T], connection: sqlite3.Connection) -> T:
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = operation(connection)
        connection.execute("COMMIT")
    except BaseException:
        # COMMIT itself can fail (disk full): never leave the transaction open
        with contextlib.suppress(sqlite3.OperationalError):  # none left to roll back
            connection.execute("ROLLBACK")
        raise
    return result


def rows(connection: sqlite3.Connection, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
    """Every row of one statement; fetching them all ends it (and closes its cursor)."""
    cursor = connection.execute(sql, params)
    try:
        return [tuple(r) for r in cursor.fetchall()]
    finally:
        cursor.close()


def changed(connection: sqlite3.Connection, sql: str, params: Params = ()) -> int:
    """Run one writing statement to its end; the number of rows it changed."""
    cursor = connection.execute(sql, params)
    try:
        return cursor.rowcount
    finally:
        cursor.close()
