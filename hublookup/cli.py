"""The Hub lookup for `python -m advisor "<repo id>"`: the same resolver and cache as the
bot (the cache is the bot's SQLite file, `--db`, default DATABASE_PATH); `--offline` reads
the catalog and that cache only."""

from __future__ import annotations

import asyncio
from pathlib import Path

from advisor.parse import ParsedQuery
from hublookup.cache import HubCache
from hublookup.client import HubClient
from hublookup.query import hub_query
from hublookup.resolve import HubAnswer, find_repo_id, resolve
from hublookup.settings import HubSettings


def default_db() -> Path:
    from bot.settings import Settings

    return Settings(_env_file=".env").database_path  # type: ignore[call-arg]


async def _lookup(text: str, repo_id: str, db: Path, offline: bool) -> HubAnswer:
    from bot.storage import Repository

    settings = HubSettings()
    repo = await Repository.open(db)
    try:
        client = (
            None
            if offline
            else HubClient(settings.hf_endpoint, settings.token(), settings.hub_timeout_s)
        )
        return await resolve(repo_id, HubCache(repo), client, max_age_days=settings.hub_cache_days)
    finally:
        await repo.close()


def lookup(
    text: str, parsed: ParsedQuery, db: Path | None, offline: bool
) -> tuple[ParsedQuery, HubAnswer] | None:
    """None when the text names no repo id; else the question with the Hub model in it, or
    the parse error as it was and a HubAnswer that says why (answer.error)."""
    repo_id = find_repo_id(text)
    if repo_id is None:
        return None
    answer = asyncio.run(_lookup(text, repo_id, db or default_db(), offline))
    if answer.model is None:
        return parsed, answer
    return hub_query(text, repo_id, answer.model), answer
