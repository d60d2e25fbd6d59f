"""What was read from the Hub, kept in the bot's SQLite file (migration 0003_hub_cache).

Reads and writes go through bot.storage.Repository's own reader and writer (one lock per
connection, each write one BEGIN IMMEDIATE … COMMIT), so the cache obeys the same
discipline as history. A copy is also kept in memory: a cached answer then costs no
database round trip at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.hubspec import HubFacts

if TYPE_CHECKING:
    from bot.storage import Repository


class HubCache:
    def __init__(self, repo: Repository) -> None:
        self._repo = repo
        self._memory: dict[str, HubFacts] = {}

    async def get(self, repo_id: str) -> HubFacts | None:
        key = repo_id.lower()
        if key in self._memory:
            return self._memory[key]
        row = await self._repo._one("SELECT data FROM hub_cache WHERE repo_id = ?", (key,))
        if row is None:
            return None
        facts = HubFacts.model_validate_json(row[0])
        self._memory[key] = facts
        return facts

    async def put(self, facts: HubFacts) -> None:
        key = facts.repo_id.lower()
        await self._repo._write(
            "INSERT INTO hub_cache (repo_id, revision, fetched_at, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (repo_id) DO UPDATE SET revision = excluded.revision, "
            "fetched_at = excluded.fetched_at, data = excluded.data",
            (key, facts.sha, facts.read_at, facts.model_dump_json()),
        )
        self._memory[key] = facts
