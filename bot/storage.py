"""The one module that talks SQL: users, chats, question history and PTB's saved state.

One aiosqlite connection in autocommit mode, WAL journal and a busy timeout. Every
statement is parameterized. Multi-statement changes run in an explicit transaction under
an asyncio lock, so two handlers never interleave inside one.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite
from pydantic import BaseModel

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
BUSY_TIMEOUT_MS = 5000
SEEN_REFRESH_S = 300  # last_seen is kept to five minutes; saves two writes on most updates
CACHE_LIMIT = 100_000


class StorageError(Exception):
    """The operator's problem (unwritable path, database from the future, bad migration):
    start-up stops with this message."""


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


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, str, Path]]:
    out = []
    for path in sorted(directory.glob("*.sql")):
        m = re.fullmatch(r"(\d{4})_([\w-]+)\.sql", path.name)
        if not m:
            raise StorageError(f"migration file name must look like 0001_name.sql: {path.name}")
        out.append((int(m.group(1)), m.group(2), path))
    versions = [v for v, _, _ in out]
    if versions != list(range(1, len(versions) + 1)):
        raise StorageError(f"migrations must be numbered 1..n without gaps: {versions}")
    return out


class Repository:
    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self._db = conn
        self.path = path
        self._tx_lock = asyncio.Lock()
        # One bot process owns the file (Telegram allows one poller per token), so these
        # in-memory copies stay true; every write below that changes them clears them.
        self._seen_at: dict[tuple, float] = {}
        self._languages: dict[tuple[int | None, int | None], tuple[str | None, str | None]] = {}

    # --- opening, migrations -------------------------------------------------------------

    @classmethod
    async def open(cls, path: Path | str, migrations_dir: Path = MIGRATIONS_DIR) -> Repository:
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = await aiosqlite.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        repo = cls(conn, path)
        try:
            await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await repo._migrate(migration_files(migrations_dir))
            await conn.execute("PRAGMA journal_mode = WAL")
            await conn.execute("PRAGMA synchronous = NORMAL")
            await conn.execute("PRAGMA foreign_keys = ON")
        except StorageError:
            await conn.close()
            raise
        except sqlite3.Error as exc:
            await conn.close()
            raise StorageError(f"cannot use database {path}: {exc}") from exc
        return repo

    async def schema_version(self) -> int:
        rows = await self._all(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        )
        if not rows:
            return 0
        row = await self._one("SELECT MAX(version) FROM schema_migrations")
        return int(row[0] or 0)

    async def _migrate(self, files: list[tuple[int, str, Path]]) -> None:
        current = await self.schema_version()
        known = files[-1][0] if files else 0
        if current > known:
            raise StorageError(
                f"database {self.path} has schema version {current}, newer than this code "
                f"(knows up to {known}); run a newer release or restore a backup"
            )
        for version, name, file in files:
            if version <= current:
                continue
            script = (
                "BEGIN IMMEDIATE;\n"
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);\n"
                f"{file.read_text(encoding='utf-8')}\n;\n"
                # version and name come from the file name pattern above (digits, word chars)
                f"INSERT INTO schema_migrations VALUES ({version}, '{name}', '{now_iso()}');\n"
                "COMMIT;"
            )
            try:
                await self._db.executescript(script)
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    await self._db.execute("ROLLBACK")
                raise StorageError(f"migration {file.name} failed, nothing changed: {exc}") from exc

    async def close(self) -> None:
        await self._db.close()

    # --- small helpers ---------------------------------------------------------------------

    async def _all(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        async with self._db.execute(sql, params) as cur:
            return list(await cur.fetchall())

    async def _one(self, sql: str, params: tuple = ()) -> sqlite3.Row | None:
        async with self._db.execute(sql, params) as cur:
            return await cur.fetchone()

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._tx_lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                await self._db.execute("ROLLBACK")
                raise
            await self._db.execute("COMMIT")

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
        async with self._tx_lock:
            if user_id is not None:
                await self._db.execute(
                    "INSERT INTO users (user_id, first_name, tg_language, first_seen, last_seen) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET "
                    "first_name = excluded.first_name, "
                    "tg_language = COALESCE(excluded.tg_language, users.tg_language), "
                    "last_seen = excluded.last_seen",
                    (user_id, first_name, tg_language, ts, ts),
                )
            if chat_id is not None and chat_type is not None:
                await self._db.execute(
                    "INSERT INTO chats (chat_id, type, title, first_seen, last_seen) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET "
                    "type = excluded.type, title = excluded.title, last_seen = excluded.last_seen",
                    (chat_id, chat_type, chat_title, ts, ts),
                )

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
            user = (
                await self._one("SELECT language FROM users WHERE user_id = ?", (user_id,))
                if user_id
                else None
            )
            chat = (
                await self._one("SELECT language FROM chats WHERE chat_id = ?", (chat_id,))
                if chat_id
                else None
            )
            if len(self._languages) > CACHE_LIMIT:
                self._languages.clear()
            self._languages[key] = (user[0] if user else None, chat[0] if chat else None)
        return self._languages[key]

    def _forget_cached(self) -> None:
        self._languages.clear()
        self._seen_at.clear()

    async def set_user_language(self, user_id: int, language: str | None) -> None:
        await self._db.execute(
            "UPDATE users SET language = ? WHERE user_id = ?", (language, user_id)
        )
        self._forget_cached()

    async def set_chat_language(self, chat_id: int, language: str | None) -> None:
        await self._db.execute(
            "UPDATE chats SET language = ? WHERE chat_id = ?", (language, chat_id)
        )
        self._forget_cached()

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """A group upgraded to a supergroup gets a new id; its history follows it."""
        self._forget_cached()
        async with self._transaction() as db:
            await db.execute(
                "UPDATE OR IGNORE chats SET chat_id = ?, type = 'supergroup' WHERE chat_id = ?",
                (new_chat_id, old_chat_id),
            )
            await db.execute(
                "UPDATE history SET chat_id = ? WHERE chat_id = ?", (new_chat_id, old_chat_id)
            )

    # --- history ---------------------------------------------------------------------------

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
    ) -> int:
        """Store one question; an update delivered twice (after a crash) keeps one row."""
        row = await self._one(
            "INSERT INTO history (update_id, user_id, chat_id, raw_text, canonical, workload_json, "
            "summary_json, catalog_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (update_id) DO UPDATE SET update_id = excluded.update_id RETURNING id",
            (
                update_id,
                user_id,
                chat_id,
                raw_text,
                canonical,
                json.dumps(workload, ensure_ascii=False) if workload is not None else None,
                json.dumps(summary, ensure_ascii=False) if summary is not None else None,
                catalog_version,
                now_iso(),
            ),
        )
        assert row is not None
        return int(row[0])

    _HISTORY_COLUMNS = (
        "id, user_id, chat_id, raw_text, canonical, workload_json, summary_json, "
        "catalog_version, created_at"
    )

    @staticmethod
    def _entry(row: sqlite3.Row) -> HistoryEntry:
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
        rows = await self._all(
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
        async with self._db.execute("DELETE FROM history WHERE created_at < ?", (cutoff,)) as cur:
            return cur.rowcount

    async def forget_user(self, user_id: int) -> dict[str, int]:
        """Delete everything stored about one user; returns what was deleted, by kind."""
        self._forget_cached()
        async with self._transaction() as db:
            counts: dict[str, int] = {}
            async with db.execute("DELETE FROM history WHERE user_id = ?", (user_id,)) as cur:
                counts["questions"] = cur.rowcount
            async with db.execute(
                "DELETE FROM ptb_state WHERE (kind = 'user_data' AND key = ?) "
                "OR (kind LIKE 'conversation:%' AND json_extract(key, '$[#-1]') = ?)",
                (str(user_id), user_id),
            ) as cur:
                counts["saved_state"] = cur.rowcount
            async with db.execute("DELETE FROM users WHERE user_id = ?", (user_id,)) as cur:
                counts["profile"] = cur.rowcount
            async with db.execute(
                "DELETE FROM chats WHERE chat_id = ? AND type = 'private'", (user_id,)
            ) as cur:
                counts["private_chat"] = cur.rowcount
            return counts

    async def stats(self, days: int = 14) -> Stats:
        cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
        users = await self._one("SELECT COUNT(*) FROM users")
        chats = await self._one("SELECT COUNT(*) FROM chats")
        questions = await self._one("SELECT COUNT(*) FROM history")
        per_day = await self._all(
            "SELECT substr(created_at, 1, 10) AS day, COUNT(*) FROM history WHERE created_at >= ? "
            "GROUP BY day ORDER BY day DESC",
            (cutoff,),
        )
        models = await self._all(
            "SELECT json_extract(summary_json, '$.model') AS m, COUNT(*) AS n FROM history "
            "WHERE m IS NOT NULL GROUP BY m ORDER BY n DESC, m LIMIT 5"
        )
        gpus = await self._all(
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
        ts = now_iso()
        await self._db.executemany(
            "INSERT OR IGNORE INTO inbox (update_id, data, received_at) VALUES (?, ?, ?)",
            # ASCII JSON: any string Telegram can send is storable, even a lone surrogate
            [(u["update_id"], json.dumps(u), ts) for u in updates],
        )

    async def inbox_done(self, update_id: int) -> None:
        await self._db.execute("DELETE FROM inbox WHERE update_id = ?", (update_id,))

    async def inbox_pending(self) -> list[dict]:
        return [
            json.loads(r[0]) for r in await self._all("SELECT data FROM inbox ORDER BY update_id")
        ]

    # --- PTB persistence -------------------------------------------------------------------

    async def load_state(self, kind: str) -> dict[str, object]:
        rows = await self._all("SELECT key, data FROM ptb_state WHERE kind = ?", (kind,))
        return {r[0]: json.loads(r[1]) for r in rows}

    async def save_state(self, kind: str, key: str, data: object | None) -> None:
        if data is None:
            await self._db.execute("DELETE FROM ptb_state WHERE kind = ? AND key = ?", (kind, key))
        else:
            await self._db.execute(
                "INSERT INTO ptb_state (kind, key, data) VALUES (?, ?, ?) "
                "ON CONFLICT (kind, key) DO UPDATE SET data = excluded.data",
                (kind, key, json.dumps(data, ensure_ascii=False)),
            )


def backup_database(source: Path, target: Path) -> None:
    """A consistent copy of a live database through SQLite's online backup API. Runs from the
    command line (`python -m bot backup PATH`), never inside a handler."""
    if not source.exists():
        raise StorageError(f"no database at {source}")
    if target.exists():
        raise StorageError(f"{target} exists; choose a new file name")
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        src.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    except sqlite3.Error as exc:
        raise StorageError(f"backup failed: {exc}") from exc
    finally:
        src.close()
