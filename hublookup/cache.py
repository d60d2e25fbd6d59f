"""What was read from the Hub, kept where its owner says (`HubStore`), with a copy in
memory: a cached answer then costs no storage round trip at all.

hublookup declares the storage it needs and owns none: the bot hands it its database
(bot.storage.Repository keeps the rows in table hub_cache, migration 0004_hub_cache), and
the command line hands it a SQLite file (`SqliteFileStore`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Protocol

from advisor.hubspec import HubFacts


class HubStore(Protocol):
    """Where Hub readings persist: one JSON document (`HubFacts`) per lower-cased repo id."""

    async def read_hub_facts(self, repo_id: str) -> str | None: ...

    async def write_hub_facts(
        self, repo_id: str, revision: str | None, fetched_at: str, data: str
    ) -> None: ...


class HubCache:
    def __init__(self, store: HubStore) -> None:
        self._store = store
        self._memory: dict[str, HubFacts] = {}

    async def get(self, repo_id: str) -> HubFacts | None:
        key = repo_id.lower()
        if key in self._memory:
            return self._memory[key]
        data = await self._store.read_hub_facts(key)
        if data is None:
            return None
        facts = HubFacts.model_validate_json(data)
        self._memory[key] = facts
        return facts

    async def put(self, facts: HubFacts) -> None:
        key = facts.repo_id.lower()
        await self._store.write_hub_facts(key, facts.sha, facts.read_at, facts.model_dump_json())
        self._memory[key] = facts


# The same columns as migrations/0004_hub_cache.sql, so the bot's database file serves as
# well as a file of the command line's own.
_TABLE = (
    "CREATE TABLE IF NOT EXISTS hub_cache (repo_id TEXT PRIMARY KEY, revision TEXT, "
    "fetched_at TEXT NOT NULL, data TEXT NOT NULL)"
)
UPSERT_HUB_FACTS = (
    "INSERT INTO hub_cache (repo_id, revision, fetched_at, data) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (repo_id) DO UPDATE SET revision = excluded.revision, "
    "fetched_at = excluded.fetched_at, data = excluded.data"
)


class SqliteFileStore:
    """The command line's store: a SQLite file, opened for each read or write (one
    question per run; nothing else waits on it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path)
        conn.execute(_TABLE)
        return conn

    async def read_hub_facts(self, repo_id: str) -> str | None:
        conn = self._connect()
        try:
            row = conn.execute("SELECT data FROM hub_cache WHERE repo_id = ?", (repo_id,))
            found = row.fetchone()
        finally:
            conn.close()
        return found[0] if found else None

    async def write_hub_facts(
        self, repo_id: str, revision: str | None, fetched_at: str, data: str
    ) -> None:
        conn = self._connect()
        try:
            with conn:
                conn.execute(UPSERT_HUB_FACTS, (repo_id, revision, fetched_at, data))
        finally:
            conn.close()
