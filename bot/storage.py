"""The one module that talks SQL: users, chats, question history and PTB's saved state.

Two SQLite connections, each on its own thread (`bot.sqlite_worker`): the writer runs every
write, each a single statement or one BEGIN IMMEDIATE … COMMIT, one after another; the reader
serves reads, which in WAL mode see only committed rows and never wait for the writer. Every
statement is parameterized. The stores beside this module (`bot.lab_store`,
`bot.measurement_store`) use the same two connections through `query` and `transaction`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from bot import fastjson, schema
from bot.schema import StorageError, now_iso
from bot.sqlite_worker import BUSY_TIMEOUT_MS, Operation, Params, SQLiteWorker, changed
from bot.sqlite_worker import rows as rows_of
from hublookup.cache import UPSERT_HUB_FACTS

log = logging.getLogger(__name__)

T = TypeVar("T")

SEEN_REFRESH_S = 300  # last_seen is kept to five minutes; saves two writes on most updates
CACHE_LIMIT = 100_000
# ids per transaction of handled updates: x 2 values in the inbox_handled INSERT, under
# SQLite's 999 bound variables of old builds
INBOX_DONE_BATCH = 400
# handled update ids kept against late copies: Telegram keeps an update at most 24 hours
HANDLED_KEPT_HOURS = 48
# History ids reserved on disk at a time (Repository.reserve_history_id): one committed write
# per this many answers; a restart skips what is left of the block.
HISTORY_ID_BLOCK = 1000
INBOX_ROWS_PER_INSERT = 300  # x 3 values: under the same 999 (getUpdates pages hold <= 100)


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


class Stats(BaseModel):
    users: int
    chats: int
    questions: int
    per_day: list[tuple[str, int]]
    top_models: list[tuple[str, int]]
    top_gpus: list[tuple[str, int]]


class Repository:
    def __init__(self, writer: SQLiteWorker, reader: SQLiteWorker, path: Path) -> None:
        self._writer = writer
        self._reader = reader
        self.path = path
        # One bot process owns the file (the lock in bot.instance), so these in-memory
        # copies stay true; every write below that changes them clears them.
        self._seen_at: dict[tuple, float] = {}
        self._languages: dict[tuple[int | None, int | None], tuple[str | None, str | None]] = {}
        # History ids handed out ahead of their rows (`reserve_history_id`): the next one
        # and the end of the block reserved on disk.
        self._history_ids = (0, 0)
        self._reserving = asyncio.Lock()

    # --- opening, checks, migrations -------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: Path | str,
        migrations_dir: Path | None = None,
        required_tables: dict[str, int] | None = None,
    ) -> Repository:
        """Open (create, migrate) the database and prove it usable: a committed write and
        `PRAGMA quick_check`. Any failure is a StorageError naming the file. The bot's own
        migrations (the default) must leave every table its code uses (REQUIRED_TABLES);
        a test's own folder of migrations names what it requires, if anything."""
        if migrations_dir is None:
            migrations_dir = schema.MIGRATIONS_DIR
            required_tables = schema.REQUIRED_TABLES if required_tables is None else required_tables
        required = required_tables or {}
        path = Path(path)
        try:
            schema.prepare_files(path)
        except OSError as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        writer = SQLiteWorker(path, "writer")
        reader = SQLiteWorker(path, "reader")
        repo = cls(writer, reader, path)
        try:
            await writer.open(
                f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
                "PRAGMA foreign_keys = ON",
                # /forget: deleted rows are overwritten with zeros, not left in free pages
                "PRAGMA secure_delete = ON",
            )
            files = schema.migration_files(migrations_dir)
            version = await writer.run(lambda db: schema.migrate(db, path, files))
            await writer.run(lambda db: schema.check_tables(db, path, required))
            await writer.run(schema.use_wal)
            await writer.run(lambda db: schema.check_usable(db, version))
            await reader.open(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}", "PRAGMA query_only = ON")
        except BaseException as exc:
            await reader.close()
            await writer.close()
            if isinstance(exc, sqlite3.Error):
                raise StorageError(f"cannot use database {path}: {exc}") from exc
            raise
        schema.restrict(path)
        return repo

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

    # --- the Hub cache (hublookup.cache.HubStore) --------------------------------------------

    async def read_hub_facts(self, repo_id: str) -> str | None:
        row = await self._one("SELECT data FROM hub_cache WHERE repo_id = ?", (repo_id,))
        return row[0] if row else None

    async def write_hub_facts(
        self, repo_id: str, revision: str | None, fetched_at: str, data: str
    ) -> None:
        await self._write(UPSERT_HUB_FACTS, (repo_id, revision, fetched_at, data))

    # --- users and chats -------------------------------------------------------------------

    async def seen(
        self,
        user_id: int | None,
        first_name: str | None,
        tg_language: str | None,
        chat_id: int | None,
        chat_type: str | None,
        chat_title: str | None,
    ) -> None:
        signature = (user_id, first_name, tg_language, chat_id, chat_type, chat_title)
        now = time.monotonic()
        if now - self._seen_at.get(signature, -SEEN_REFRESH_S) < SEEN_REFRESH_S:
            return
        if len(self._seen_at) > CACHE_LIMIT:
            self._seen_at.clear()
        self._seen_at[signature] = now
        ts = now_iso()

        items: list[tuple[str, tuple]] = []
        if user_id is not None:
            items.append(
                (
                    "INSERT INTO users (user_id, first_name, tg_language, first_seen, last_seen) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET "
                    "first_name = excluded.first_name, "
                    "tg_language = COALESCE(excluded.tg_language, users.tg_language), "
                    "last_seen = excluded.last_seen",
                    (user_id, first_name, tg_language, ts, ts),
                )
            )
        if chat_id is not None and chat_type is not None:
            items.append(
                (
                    "INSERT INTO chats (chat_id, type, title, first_seen, last_seen) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET "
                    "type = excluded.type, title = excluded.title, last_seen = excluded.last_seen",
                    (chat_id, chat_type, chat_title, ts, ts),
                )
            )
        if items:  # one transaction in one handoff (a new user's first update does this)
            await self._writer.statements_in_transaction(items)

    async def user(self, user_id: int) -> dict | None:
        row = await self._one(
            "SELECT user_id, first_name, language, tg_language FROM users WHERE user_id = ?",
            (user_id,),
        )
        if row is None:
            return None
        return {"user_id": row[0], "first_name": row[1], "language": row[2], "tg_language": row[3]}

    async def language_choices(
        self, user_id: int | None, chat_id: int | None
    ) -> tuple[str | None, str | None]:
        """(the user's /lang choice, the group's default), each None when not chosen."""
        key = (user_id, chat_id)
        if key not in self._languages:
            # one statement, so one read (shared with the reads asked meanwhile)
            ((user, chat),) = await self._reader.statement_rows(
                "SELECT (SELECT language FROM users WHERE user_id = ?), "
                "(SELECT language FROM chats WHERE chat_id = ?)",
                (user_id, chat_id),
            )
            choices = (user if user_id else None, chat if chat_id else None)
            if len(self._languages) > CACHE_LIMIT:
                self._languages.clear()
            self._languages[key] = choices
        return self._languages[key]

    def _forget_cached(self) -> None:
        self._languages.clear()
        self._seen_at.clear()
        lab = getattr(self, "lab_store", None)  # bot.lab_store: machines moved or deleted
        if lab is not None:
            lab.forget_cached()

    async def set_user_language(self, user_id: int, language: str | None) -> None:
        await self._write("UPDATE users SET language = ? WHERE user_id = ?", (language, user_id))
        self._forget_cached()

    async def set_chat_language(self, chat_id: int, language: str | None) -> None:
        await self._write("UPDATE chats SET language = ? WHERE chat_id = ?", (language, chat_id))
        self._forget_cached()

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """A group upgraded to a supergroup gets a new id; its language and history follow.
        Telegram sends two service messages (migrate_to in the old group, migrate_from in
        the new one) in either order; the supergroup may have spoken first, so its row may
        exist already. Running this twice is harmless."""

        def write(db: sqlite3.Connection) -> None:
            changed(
                db,
                "INSERT INTO chats (chat_id, type, title, language, first_seen, last_seen) "
                "SELECT ?, 'supergroup', title, language, first_seen, last_seen FROM chats "
                "WHERE chat_id = ? ON CONFLICT (chat_id) DO UPDATE SET type = 'supergroup', "
                "language = COALESCE(chats.language, excluded.language)",
                (new_chat_id, old_chat_id),
            )
            changed(db, "DELETE FROM chats WHERE chat_id = ?", (old_chat_id,))
            changed(
                db, "UPDATE history SET chat_id = ? WHERE chat_id = ?", (new_chat_id, old_chat_id)
            )
            # the group's machines (/lab); a name the supergroup registered already keeps its own
            changed(
                db,
                "UPDATE OR IGNORE lab_machines SET chat_id = ? WHERE chat_id = ?",
                (new_chat_id, old_chat_id),
            )
            changed(db, "DELETE FROM lab_machines WHERE chat_id = ?", (old_chat_id,))

        await self._writer.transaction(write)
        self._forget_cached()

    # --- history ---------------------------------------------------------------------------

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

    async def forget_user(self, user_id: int) -> dict[str, int]:
        """Delete everything stored about one user; returns what was deleted, by kind. The
        WAL is then checkpointed and truncated, so the deleted text does not linger in the
        `-wal` file (secure_delete has zeroed it in the database file)."""

        def delete(db: sqlite3.Connection) -> dict[str, int]:
            statements = {
                "questions": ("DELETE FROM history WHERE user_id = ?", (user_id,)),
                "saved_state": (
                    "DELETE FROM ptb_state WHERE (kind IN ('user_data', 'chat_data') AND key = ?) "
                    "OR (kind LIKE 'conversation:%' AND json_extract(key, '$[#-1]') = ?)",
                    (str(user_id), user_id),
                ),
                "profile": ("DELETE FROM users WHERE user_id = ?", (user_id,)),
                "private_chat": (
                    "DELETE FROM chats WHERE chat_id = ? AND type = 'private'",
                    (user_id,),
                ),
                "my_cards": ("DELETE FROM lab_machines WHERE chat_id = ?", (user_id,)),
                # the questions behind their long inline deep links (migration 0005)
                "inline_questions": ("DELETE FROM inline_links WHERE user_id = ?", (user_id,)),
                # a group's machine stays the group's; who wrote it last is forgotten
                "machines_written": (
                    "UPDATE lab_machines SET added_by = NULL WHERE added_by = ?",
                    (user_id,),
                ),
                # "I ran it" reports (bot.measurement_store): the user's own, wherever sent
                "reports": ("DELETE FROM measurements WHERE user_id = ?", (user_id,)),
            }
            return {kind: changed(db, sql, p) for kind, (sql, p) in statements.items()}

        counts = await self._writer.transaction(delete)
        self._forget_cached()
        await self._writer.run(schema.checkpoint)
        return counts

    async def stats(self, days: int = 14) -> Stats:
        cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
        users = await self._one("SELECT COUNT(*) FROM users")
        chats = await self._one("SELECT COUNT(*) FROM chats")
        questions = await self._one("SELECT COUNT(*) FROM history")
        per_day = await self.query(
            "SELECT substr(created_at, 1, 10) AS day, COUNT(*) FROM history WHERE created_at >= ? "
            "GROUP BY day ORDER BY day DESC",
            (cutoff,),
        )
        models = await self.query(
            "SELECT json_extract(summary_json, '$.model') AS m, COUNT(*) AS n FROM history "
            "WHERE m IS NOT NULL GROUP BY m ORDER BY n DESC, m LIMIT 5"
        )
        gpus = await self.query(
            "SELECT json_extract(summary_json, '$.gpu') AS g, COUNT(*) AS n FROM history "
            "WHERE g IS NOT NULL GROUP BY g ORDER BY n DESC, g LIMIT 5"
        )
        return Stats(
            users=int(users[0]) if users else 0,
            chats=int(chats[0]) if chats else 0,
            questions=int(questions[0]) if questions else 0,
            per_day=[(r[0], r[1]) for r in per_day],
            top_models=[(r[0], r[1]) for r in models],
            top_gpus=[(r[0], r[1]) for r in gpus],
        )

    # --- inbox (updates fetched, not yet handled) ------------------------------------------

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

    # --- PTB persistence -------------------------------------------------------------------

    async def load_state(self, kind: str) -> dict[str, object]:
        rows = await self.query("SELECT key, data FROM ptb_state WHERE kind = ?", (kind,))
        return {r[0]: json.loads(r[1]) for r in rows}

    async def save_state_json(self, kind: str, key: str, encoded: str | None) -> None:
        """PTB's state for one key, already encoded as JSON (bot.persistence encodes each
        once, to tell whether it changed); None deletes the row."""
        if encoded is None:
            await self._write("DELETE FROM ptb_state WHERE kind = ? AND key = ?", (kind, key))
        else:
            await self._write(
                "INSERT INTO ptb_state (kind, key, data) VALUES (?, ?, ?) "
                "ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data",
                (kind, key, encoded),
            )


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
