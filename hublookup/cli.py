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
from hublookup.resolve import HubAnswer, find_repo_id, resolve, search_term, search_texts
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


async def _suggest(name: str) -> list[str]:
    settings = HubSettings()
    client = HubClient(settings.hf_endpoint, settings.token(), settings.hub_timeout_s)
    return await client.search_name(name, search_term(name))


async def _search(texts: list[str]) -> list[str] | None:
    settings = HubSettings()
    client = HubClient(settings.hf_endpoint, settings.token(), settings.hub_timeout_s)
    return await client.search_first(texts)


def lookup(
    text: str, parsed: ParsedQuery, db: Path | None, offline: bool
) -> tuple[ParsedQuery, HubAnswer | None] | None:
    """None when there is nothing to look up. A repo id: the question with the Hub model in
    it, or the parse error as it was and a HubAnswer that says why (answer.error). Another
    unknown name: the parse error with the Hub's closest repos first among its suggestions."""
    if parsed.ok and parsed.unrecognized is not None:  # "olmo2:7b": a generic 7B, noted
        if offline:
            return None
        name = parsed.unrecognized.detail
        found = asyncio.run(_search(search_texts(name)))
        error = "unreachable" if found is None else None
        return parsed, HubAnswer(repo_id=name, error=error, suggestions=found or [])
    repo_id = find_repo_id(text)
    if repo_id is None:
        if offline or parsed.error is None or parsed.error.code != "unknown_model":
            return None
        found = asyncio.run(_suggest(parsed.error.detail.split(":")[0]))
        merged = found + [s for s in parsed.error.suggestions if s not in found]
        error = parsed.error.model_copy(update={"suggestions": merged})
        return parsed.model_copy(update={"error": error}), None
    answer = asyncio.run(_lookup(text, repo_id, db or default_db(), offline))
    if answer.model is None:
        return parsed, answer
    return hub_query(text, repo_id, answer.model), answer
