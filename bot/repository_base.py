"""The two connections every store of the bot reads and writes through (bot.storage's
`Repository`, and beside it bot.lab_store and bot.measurement_store): the writer runs every
write, the reader serves reads (see bot.storage)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypeVar

from bot import schema
from bot.sqlite_worker import Operation, Params, SQLiteWorker

T = TypeVar("T")


class RepositoryBase:
    def __init__(self, writer: SQLiteWorker, reader: SQLiteWorker, path: Path) -> None:
        self._writer = writer
        self._reader = reader
        self.path = path
        # One bot process owns the file (the lock in bot.instance), so these in-memory
        # copies stay true; every write that changes them clears them (bot.storage).
        self._seen_at: dict[tuple, float] = {}
        self._languages: dict[tuple[int | None, int | None], tuple[str | None, str | None]] = {}
        # History ids handed out ahead of their rows (`reserve_history_id`): the next one
        # and the end of the block reserved on disk.
        self._history_ids = (0, 0)
        self._reserving = asyncio.Lock()

    async def schema_version(self) -> int:
        return await self._reader.run(schema.schema_version)

    async def close(self) -> None:
        await self._reader.close()
        await self._writer.close()

    # --- reading and writing (also for bot.lab_store and bot.measurement_store) ------------

    async def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row of one read, on the reader's connection (committed rows only)."""
        return await self._reader.statement_rows(sql, params)

    async def transaction(self, operation: Operation[T]) -> T:
        """`operation(connection)` as one BEGIN IMMEDIATE … COMMIT on the writer's
        connection, all or nothing (`SQLiteWorker.transaction`). It runs on the connection's
        thread: a plain function of a `sqlite3.Connection` (`bot.sqlite_worker.rows` and
        `changed` run its statements) that returns plain values."""
        return await self._writer.transaction(operation)

    async def _one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        rows = await self.query(sql, params)
        return rows[0] if rows else None

    async def _write(self, sql: str, params: Params = ()) -> int:
        """One statement as one transaction (SQLiteWorker.statement); returns the rows it
        changed."""
        return await self._writer.statement(sql, params)
