"""The question history: ids handed out before their rows are written, a question stored
once per update, the recent questions of a user in a chat, and the purge of old ones."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

from bot import fastjson
from bot.repository_base import RepositoryBase
from bot.schema import now_iso
from bot.sqlite_worker import changed
from bot.sqlite_worker import rows as rows_of

# History ids reserved on disk at a time (Repository.reserve_history_id): one committed write
# per this many answers; a restart skips what is left of the block.
HISTORY_ID_BLOCK = 1000


class HistoryEntry(BaseModel):
    id: int
    user_id: int
    chat_id: int
    raw_text: str
    canonical: str | None
    workload: dict | None
    summary: dict | None
    catalog_version: str
    created_at: str


class HistoryStore(RepositoryBase):
    """The history's reads and writes, mixed into bot.storage.Repository."""

    async def reserve_history_id(self) -> int:
        """The id the next history row will have, known before the row is written, so an
        answer can go out with its buttons (which carry the id) while its row is written
        (bot.answer.reply_with_answer: the reply waited ~6 ms, p99 36 ms, behind the
        writer's batch in bench/load.py). Ids come from blocks of `HISTORY_ID_BLOCK`
        whose end is committed (as the table's AUTOINCREMENT counter) before the first id of
        the block is handed out: ids handed out by a process killed before their rows were
        written are never handed out again, so an old message's button cannot come to name
        another question (the "hi/lo" way of handing out keys)."""
        nxt, end = self._history_ids
        if nxt >= end:
            async with self._reserving:
                nxt, end = self._history_ids
                if nxt >= end:
                    nxt, end = await self._writer.transaction(_reserve_history_block)
        self._history_ids = (nxt + 1, end)
        return nxt

    async def add_history(
        self,
        *,
        user_id: int,
        chat_id: int,
        raw_text: str,
        canonical: str | None,
        workload: dict | None,
        summary: dict | None,
        catalog_version: str,
        update_id: int | None = None,
        entry_id: int | None = None,
    ) -> int:
        """Store one question under `entry_id` (from `reserve_history_id`; one is reserved
        when not given); returns its id. An update delivered twice (after a crash) keeps one
        row, which moves to the new id: the reply sent this time carries it."""
        if entry_id is None:
            entry_id = await self.reserve_history_id()
        params = (
            entry_id,
            update_id,
            user_id,
            chat_id,
            raw_text,
            canonical,
            # orjson where installed (bot.fastjson): the standard library's encoder was ~2% of
            # the loop over the first second of bench/load.py (every answer new)
            fastjson.dumps(workload) if workload is not None else None,
            fastjson.dumps(summary) if summary is not None else None,
            catalog_version,
            now_iso(),
        )
        inserted = await self._writer.statement_rows(
            "INSERT INTO history (id, update_id, user_id, chat_id, raw_text, canonical, "
            "workload_json, summary_json, catalog_version, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (update_id) "
            "DO UPDATE SET id = excluded.id RETURNING id",
            params,
        )
        return int(inserted[0][0])

    _HISTORY_COLUMNS = (
        "id, user_id, chat_id, raw_text, canonical, workload_json, summary_json, "
        "catalog_version, created_at"
    )

    @staticmethod
    def _entry(row: tuple) -> HistoryEntry:
        return HistoryEntry(
            id=row[0],
            user_id=row[1],
            chat_id=row[2],
            raw_text=row[3],
            canonical=row[4],
            workload=json.loads(row[5]) if row[5] else None,
            summary=json.loads(row[6]) if row[6] else None,
            catalog_version=row[7],
            created_at=row[8],
        )

    async def recent_history(
        self, user_id: int, chat_id: int, limit: int = 10
    ) -> list[HistoryEntry]:
        rows = await self.query(
            f"SELECT {self._HISTORY_COLUMNS} FROM history WHERE user_id = ? AND chat_id = ? "
            "ORDER BY id DESC LIMIT ?",
            (user_id, chat_id, limit),
        )
        return [self._entry(r) for r in rows]

    async def history_entry(self, entry_id: int) -> HistoryEntry | None:
        row = await self._one(
            f"SELECT {self._HISTORY_COLUMNS} FROM history WHERE id = ?", (entry_id,)
        )
        return self._entry(row) if row else None

    async def count_history(self) -> int:
        row = await self._one("SELECT COUNT(*) FROM history")
        return int(row[0]) if row else 0

    async def purge_history(self, older_than_days: int) -> int:
        cutoff = (datetime.now(UTC) - timedelta(days=older_than_days)).isoformat(timespec="seconds")
        return await self._write("DELETE FROM history WHERE created_at < ?", (cutoff,))


def _reserve_history_block(db: sqlite3.Connection) -> tuple[int, int]:
    """In a transaction: the next `HISTORY_ID_BLOCK` history ids, past every id a row has
    had and every block reserved before (the AUTOINCREMENT counter, which SQLite itself
    never lowers), and the counter moved to the block's end."""
    ((last,),) = rows_of(
        db,
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'history'), 0), "
        "coalesce((SELECT max(id) FROM history), 0))",
    )
    start = int(last) + 1
    end = start + HISTORY_ID_BLOCK
    if not changed(db, "UPDATE sqlite_sequence SET seq = ? WHERE name = 'history'", (end - 1,)):
        changed(db, "INSERT INTO sqlite_sequence (name, seq) VALUES ('history', ?)", (end - 1,))
    return start, end
