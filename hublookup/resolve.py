"""A name the catalog could not place -> a Hub model, a cached one, or a clear refusal.

Order: the cache (fresh entries answer at once), then the Hub (one lookup per uncached
repo), then a stale cached entry if the Hub fails. A name that is not a repo id (an Ollama
tag, a family name) is searched on the Hub, its top results offered as suggestions.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re

from pydantic import BaseModel

from advisor.hubspec import HubModel, hub_model
from hublookup.cache import HubCache
from hublookup.client import HubClient, HubLookupError

# owner/name as the Hub allows them (letters, digits, "-", "_", "."), not a path or a URL
REPO_ID = re.compile(
    r"(?<![\w/.:])([A-Za-z0-9][\w.\-]{0,95})/([A-Za-z0-9][\w.\-]{0,95}[A-Za-z0-9])(?![\w/])"
)


class HubAnswer(BaseModel):
    repo_id: str
    model: HubModel | None = None
    error: str | None = None  # HubLookupError codes, or "no_size" (nothing says how big)
    suggestions: list[str] = []
    from_cache: bool = False
    stale: bool = False  # the Hub failed; an older cached reading answers
    read_at: str | None = None  # when what answers was read from the Hub


def find_repo_id(text: str) -> str | None:
    m = REPO_ID.search(text)
    return m.group(0) if m else None


def search_term(name: str) -> str:
    """What to search the Hub for: the family part of a name ("SmolLM-999M" -> "SmolLM",
    "gemma3:12b" -> "gemma3"), so a wrong size still finds its siblings."""
    stem = re.split(r"[:/]", name)[-1] if "/" in name else name.split(":")[0]
    return re.sub(r"[-_.]?\d+(?:\.\d+)?[bm](?![a-z]).*$", "", stem, flags=re.I) or stem


def search_texts(typed: str) -> list[str]:
    """What to search the Hub for, for a name typed with its size: Ollama glues name, version
    and size ("olmo2:7b"), Hub repos hyphenate them ("allenai/OLMo-2-1124-7B"). The whole
    name hyphenated ("olmo2-7b"), its family ("olmo2"), the family with its version set
    apart ("olmo-2")."""
    whole = re.sub(r"[\s:的]+", "-", typed.strip())
    family = search_term(whole)
    return list(dict.fromkeys([whole, family, re.sub(r"(?<=[a-z])(?=\d)", "-", family)]))


def _age_days(read_at: str) -> float:
    try:
        then = dt.datetime.fromisoformat(read_at)
    except ValueError:
        return float("inf")
    return (dt.datetime.now(dt.UTC) - then).total_seconds() / 86400


async def cached(repo_id: str, cache: HubCache) -> HubAnswer | None:
    facts = await cache.get(repo_id)
    if facts is None:
        return None
    model = hub_model(facts)
    return HubAnswer(
        repo_id=facts.repo_id,
        model=model,
        error=None if model else "no_size",
        from_cache=True,
        read_at=facts.read_at,
    )


def keep_late_reading(repo_id: str, cache: HubCache, client: HubClient) -> None:
    """A lookup past the time limit goes on in its thread; when it brings the repo, cache
    it, so the member's next question is answered at once."""
    work = client.late.pop(repo_id.lower(), None)
    if work is None:
        return

    def done(finished: asyncio.Future) -> None:
        if finished.cancelled() or finished.exception() is not None:
            return  # the Hub failed after all: nothing to keep (the error was retrieved)
        write = asyncio.ensure_future(cache.put(finished.result()))
        pending.add(write)
        write.add_done_callback(pending.discard)

    work.add_done_callback(done)
    late_work.add(work)
    work.add_done_callback(late_work.discard)


pending: set[asyncio.Future] = set()  # cache writes in flight (a reference keeps them alive)
late_work: set[asyncio.Future] = set()  # lookups past their time limit, still running


async def settle_late(wait_s: float) -> bool:
    """Wait up to `wait_s` for the lookups still running past their time limit, then for
    their cache writes. For a process about to exit (the CLI): the bot's loop lives on and
    caches a late reading whenever it lands. True when nothing is left running."""
    if late_work:
        await asyncio.wait(set(late_work), timeout=wait_s)
    if pending:
        await asyncio.wait(set(pending), timeout=wait_s)
    return not late_work and not pending


async def resolve(
    repo_id: str,
    cache: HubCache,
    client: HubClient | None,
    *,
    max_age_days: float = 7.0,
) -> HubAnswer:
    """client None: offline, the cache only."""
    hit = await cached(repo_id, cache)
    if hit is not None and (
        client is None or _age_days(hit.model.read_at if hit.model else "") < max_age_days
    ):
        return hit
    if client is None:
        return HubAnswer(repo_id=repo_id, error="offline")
    try:
        facts = await client.lookup(repo_id)
    except HubLookupError as exc:
        if exc.code == "timeout":
            keep_late_reading(repo_id, cache, client)
        if hit is not None and exc.code in ("unreachable", "timeout", "rate_limited"):
            return hit.model_copy(update={"stale": True})
        name = repo_id.split("/")[-1]
        suggestions = (
            await client.search_name(name, search_term(name)) if exc.code == "not_found" else []
        )
        return HubAnswer(repo_id=repo_id, error=exc.code, suggestions=suggestions)
    await cache.put(facts)
    model = hub_model(facts)
    if model is None:
        return HubAnswer(repo_id=facts.repo_id, error="no_size", read_at=facts.read_at)
    return HubAnswer(repo_id=facts.repo_id, model=model, read_at=facts.read_at)
