"""The Hub lookup for `python -m advisor "<repo id>"`: the same resolver and cache as the
bot, the cache in a SQLite file (`--db`, default data/hub-cache.sqlite3; the bot's
DATABASE_PATH shares the bot's cache); `--offline` reads the catalog and that cache only.
A lookup past HUB_TIMEOUT_S is waited for up to HUB_CLI_WAIT_S more (default 30 s) before
the process exits, so a slow mirror's reading answers and is cached."""

from __future__ import annotations

import asyncio
from pathlib import Path

from advisor.parse import ParsedQuery
from hublookup.cache import HubCache, SqliteFileStore
from hublookup.client import HubClient
from hublookup.query import hub_query
from hublookup.resolve import (
    HubAnswer,
    cached,
    find_repo_id,
    resolve,
    search_term,
    search_texts,
    settle_late,
)
from hublookup.settings import HubSettings

# The command line's own cache file; `--db DATABASE_PATH` shares the bot's instead.
DEFAULT_CACHE_FILE = Path("data/hub-cache.sqlite3")


async def _lookup(text: str, repo_id: str, db: Path, offline: bool) -> HubAnswer:
    settings = HubSettings()
    client = (
        None
        if offline
        else HubClient(
            settings.hf_endpoint,
            settings.token(),
            settings.hub_timeout_s,
            deadline_s=settings.hub_deadline_s,
        )
    )
    cache = HubCache(SqliteFileStore(db))
    answer = await resolve(repo_id, cache, client, max_age_days=settings.hub_cache_days)
    if answer.error == "timeout" and client is not None:
        # A slow mirror: this process would exit before the late reading lands and is
        # cached. Wait HUB_CLI_WAIT_S for it; when it lands, it answers (and is cached).
        await settle_late(settings.hub_cli_wait_s)
        late = await cached(repo_id, cache)
        if late is not None:
            return late.model_copy(update={"from_cache": False})
    return answer


async def _suggest(name: str) -> list[str]:
    settings = HubSettings()
    client = HubClient(
        settings.hf_endpoint,
        settings.token(),
        settings.hub_timeout_s,
        deadline_s=settings.hub_deadline_s,
    )
    return await client.search_name(name, search_term(name))


async def _search(texts: list[str]) -> list[str] | None:
    settings = HubSettings()
    client = HubClient(
        settings.hf_endpoint,
        settings.token(),
        settings.hub_timeout_s,
        deadline_s=settings.hub_deadline_s,
    )
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
        with_repos = parsed.error.model_copy(update={"suggestions": merged})
        return parsed.model_copy(update={"error": with_repos}), None
    answer = asyncio.run(_lookup(text, repo_id, db or DEFAULT_CACHE_FILE, offline))
    if answer.model is None:
        return parsed, answer
    return hub_query(text, repo_id, answer.model), answer
