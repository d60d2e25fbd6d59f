"""The inbox: updates fetched and not yet handled, and the ids of those handled, kept
against late copies (bot.inbox hands them out and deletes them by group commit)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot import fastjson
from bot.repository_base import RepositoryBase
from bot.schema import now_iso

# ids per transaction of handled updates: x 2 values in the inbox_handled INSERT, under
# SQLite's 999 bound variables of old builds
INBOX_DONE_BATCH = 400
# handled update ids kept against late copies: Telegram keeps an update at most 24 hours
HANDLED_KEPT_HOURS = 48
INBOX_ROWS_PER_INSERT = 300  # x 3 values: under the same 999 (getUpdates pages hold <= 100)


class InboxStore(RepositoryBase):
    """The inbox's reads and writes, mixed into bot.storage.Repository."""

    async def inbox_add(self, updates: list[dict]) -> None:
        """Store fetched updates, except those already handled (inbox_handled): a copy of
        one (a webhook re-POST, a getUpdates page fetched again after a crash) would
        otherwise sit in the inbox for good, or be answered again at the next start."""
        ts = now_iso()
        # any string Telegram can send is storable, even a lone surrogate (bot.fastjson)
        entries = [(u["update_id"], fastjson.dumps(u), ts) for u in updates]
        # One multi-row INSERT per page of updates: one statement is one transaction (all
        # rows or none, SQLiteWorker.statement) in one handoff to SQLite's thread, where
        # BEGIN, executemany, closing its cursor and COMMIT were four, for every getUpdates.
        for start in range(0, len(entries), INBOX_ROWS_PER_INSERT):
            page = entries[start : start + INBOX_ROWS_PER_INSERT]
            await self._writer.statement(
                "INSERT OR IGNORE INTO inbox (update_id, data, received_at) "
                "SELECT column1, column2, column3 FROM (VALUES "
                + ", ".join(["(?, ?, ?)"] * len(page))
                + ") WHERE column1 NOT IN (SELECT update_id FROM inbox_handled)",
                tuple(v for entry in page for v in entry),
            )

    async def probe_write(self) -> None:
        """A committed write that changes nothing (/healthz): a DELETE of an update id
        Telegram never uses (ids start at 1)."""
        await self._write("DELETE FROM inbox WHERE update_id = 0")

    async def inbox_known(self, update_id: int) -> bool:
        """Whether this update is in the inbox (being handled) or was handled already."""
        found = await self._one(
            "SELECT EXISTS (SELECT 1 FROM inbox WHERE update_id = ?) "
            "OR EXISTS (SELECT 1 FROM inbox_handled WHERE update_id = ?)",
            (update_id, update_id),
        )
        return bool(found and found[0])

    async def inbox_delete(self, ids: list[int]) -> None:
        """These updates are handled: their inbox rows go and their ids are remembered
        (inbox_handled), in one transaction per page. The bot calls it by group commit
        (bot.inbox: the updates that finish while one delete runs are deleted together by
        the next, after their state is written)."""
        ids = sorted(set(ids))
        ts = now_iso()
        for start in range(0, len(ids), INBOX_DONE_BATCH):
            page = tuple(ids[start : start + INBOX_DONE_BATCH])
            # both in one BEGIN IMMEDIATE … COMMIT, in one handoff to SQLite's thread
            await self._writer.statements_in_transaction(
                [
                    (f"DELETE FROM inbox WHERE update_id IN ({', '.join('?' * len(page))})", page),
                    (
                        "INSERT OR IGNORE INTO inbox_handled (update_id, handled_at) VALUES "
                        + ", ".join(["(?, ?)"] * len(page)),
                        tuple(v for i in page for v in (i, ts)),
                    ),
                ]
            )

    async def inbox_handled_recent(self, limit: int) -> list[int]:
        """The ids of the last `limit` handled updates (the processor's memory of copies)."""
        found = await self.query(
            "SELECT update_id FROM inbox_handled ORDER BY update_id DESC LIMIT ?", (limit,)
        )
        return [r[0] for r in found]

    async def purge_handled(self, older_than_hours: float = HANDLED_KEPT_HOURS) -> int:
        cutoff = (datetime.now(UTC) - timedelta(hours=older_than_hours)).isoformat(
            timespec="seconds"
        )
        return await self._write("DELETE FROM inbox_handled WHERE handled_at < ?", (cutoff,))

    async def inbox_pending(self) -> list[dict]:
        return [
            json.loads(r[0]) for r in await self.query("SELECT data FROM inbox ORDER BY update_id")
        ]
