"""The bot's database: users, chats, question history, the inbox and PTB's saved state.

Two SQLite connections, each on its own thread (`bot.sqlite_worker`): the writer runs every
write, each a single statement or one BEGIN IMMEDIATE … COMMIT, one after another; the reader
serves reads, which in WAL mode see only committed rows and never wait for the writer. Every
statement is parameterized. The stores beside this module (`bot.lab_store`,
`bot.measurement_store`) use the same two connections through `query` and `transaction`.
`Repository` holds users, chats and PTB's state here, the history (bot.history_store) and
the inbox (bot.inbox_store) by inheritance, all on the connections of bot.repository_base.
"""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from bot import schema
from bot.history_store import HistoryStore
from bot.inbox_store import InboxStore
from bot.schema import StorageError, now_iso
from bot.sqlite_worker import BUSY_TIMEOUT_MS, SQLiteWorker, changed
from hublookup.cache import UPSERT_HUB_FACTS

SEEN_REFRESH_S = 300  # last_seen is kept to five minutes; saves two writes on most updates
CACHE_LIMIT = 100_000


class Stats(BaseModel):
    users: int
    chats: int
    questions: int
    per_day: list[tuple[str, int]]
    top_models: list[tuple[str, int]]
    top_gpus: list[tuple[str, int]]


class Repository(HistoryStore, InboxStore):
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
