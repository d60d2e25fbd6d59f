"""SQL for /lab (a chat's own machines) and for long inline deep links (migrations 0003, 0005).

Kept beside `bot.storage` rather than in it (one module per kind of row); it reads and writes
through the repository's `query` and `transaction`, so the write discipline is the same:
every write one BEGIN IMMEDIATE … COMMIT on the writer, reads on the reader. A chat's machines are also
kept in memory (a question in a lab group reads them on every answer); every write here
clears that chat's copy.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

from advisor.recommend.owned import Machine
from bot.schema import now_iso
from bot.sqlite_worker import changed, rows
from bot.storage import CACHE_LIMIT, Repository

MAX_MACHINES = 20  # per chat: an answer lists each one, and /lab gives each a button

_COLUMNS = "id, name, gpu_id, gpu_count, price_per_card_hour, currency, note"


def _machine(row: tuple) -> Machine:
    return Machine(
        id=row[0],
        name=row[1],
        gpu_id=row[2],
        count=row[3],
        price_per_card_hour=row[4],
        currency=row[5],
        note=row[6],
    )


class LabStore:
    """The machines of each chat. One per repository (`lab_store(repo)`)."""

    def __init__(self, repo: Repository) -> None:
        self._repo = repo
        self._cache: dict[int, list[Machine]] = {}

    def _drop(self, *chat_ids: int) -> None:
        for chat_id in chat_ids:
            self._cache.pop(chat_id, None)

    async def machines(self, chat_id: int) -> list[Machine]:
        if chat_id not in self._cache:
            found = await self._repo.query(
                f"SELECT {_COLUMNS} FROM lab_machines WHERE chat_id = ? ORDER BY name",
                (chat_id,),
            )
            if len(self._cache) > CACHE_LIMIT:
                self._cache.clear()
            self._cache[chat_id] = [_machine(r) for r in found]
        return list(self._cache[chat_id])

    async def machine(self, chat_id: int, machine_id: int) -> Machine | None:
        return next((m for m in await self.machines(chat_id) if m.id == machine_id), None)

    async def save(
        self,
        chat_id: int,
        machines: list[Machine],
        by_user: int | None,
        replaces: int | None = None,
    ) -> str:
        """Add machines, or replace the ones whose name exists ("edit" is a typed line with
        the same name); `replaces` is the id of a machine the line replaces whatever its name
        (the ✏️ prompt: a rename must not leave the old machine beside the new one). Returns
        "ok", or "full" when the chat would pass MAX_MACHINES (then nothing is written)."""
        ts = now_iso()

        def write(db: sqlite3.Connection) -> str:
            names = {
                r[1]
                for r in rows(db, "SELECT id, name FROM lab_machines WHERE chat_id = ?", (chat_id,))
                if r[0] != replaces
            }
            if len(names | {m.name for m in machines}) > MAX_MACHINES:
                return "full"  # checked before any write: a full chat keeps what it had
            if replaces is not None:
                changed(
                    db,
                    "DELETE FROM lab_machines WHERE chat_id = ? AND id = ?",
                    (chat_id, replaces),
                )
            for m in machines:
                changed(
                    db,
                    "INSERT INTO lab_machines (chat_id, name, gpu_id, gpu_count, "
                    "price_per_card_hour, currency, note, added_by, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id, name) DO UPDATE SET "
                    "gpu_id = excluded.gpu_id, gpu_count = excluded.gpu_count, "
                    "price_per_card_hour = excluded.price_per_card_hour, "
                    "currency = excluded.currency, note = excluded.note, "
                    "added_by = excluded.added_by, updated_at = excluded.updated_at",
                    (
                        chat_id,
                        m.name,
                        m.gpu_id,
                        m.count,
                        m.price_per_card_hour,
                        m.currency,
                        m.note,
                        by_user,
                        ts,
                    ),
                )
            return "ok"

        try:
            return await self._repo.transaction(write)
        finally:
            self._drop(chat_id)

    async def remove(self, chat_id: int, machine_id: int) -> int:
        """Remove one machine of this chat (an id from another chat removes nothing)."""
        try:
            return await self._repo.transaction(
                lambda db: changed(
                    db,
                    "DELETE FROM lab_machines WHERE chat_id = ? AND id = ?",
                    (chat_id, machine_id),
                )
            )
        finally:
            self._drop(chat_id)

    async def forget_chat(self, chat_id: int) -> int:
        """Every machine of a chat: the bot was removed from the group, or an admin asked."""
        try:
            return await self._repo.transaction(
                lambda db: changed(db, "DELETE FROM lab_machines WHERE chat_id = ?", (chat_id,))
            )
        finally:
            self._drop(chat_id)

    def forget_cached(self, *chat_ids: int) -> None:
        """After `Repository.migrate_chat` or `forget_user` moved or deleted rows."""
        if chat_ids:
            self._drop(*chat_ids)
        else:
            self._cache.clear()

    # --- inline deep links ---------------------------------------------------------------

    async def link_query(self, key: str) -> str | None:
        found = await self._repo.query(
            "SELECT query FROM inline_links WHERE key = ? LIMIT 1", (key,)
        )
        return found[0][0] if found else None

    async def save_link(self, key: str, user_id: int, query: str) -> None:
        """The question behind a long deep link, owned by the user who typed it (/forget
        deletes it, `purge_links` ages it out; migration 0005)."""
        await self._repo.transaction(
            lambda db: changed(
                db,
                "INSERT INTO inline_links (key, user_id, query, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key, user_id) DO UPDATE SET created_at = excluded.created_at",
                (key, user_id, query, now_iso()),
            )
        )

    async def purge_links(self, older_than_days: int) -> int:
        cutoff = (datetime.now(UTC) - timedelta(days=older_than_days)).isoformat(timespec="seconds")
        return await self._repo.transaction(
            lambda db: changed(db, "DELETE FROM inline_links WHERE created_at < ?", (cutoff,))
        )


def lab_store(repo: Repository) -> LabStore:
    """The LabStore of a repository (one per open database, so one cache per process)."""
    store = getattr(repo, "lab_store", None)
    if store is None:
        store = LabStore(repo)
        repo.lab_store = store  # type: ignore[attr-defined]
    return store
