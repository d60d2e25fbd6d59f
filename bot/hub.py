"""A question naming a model the catalog lacks: look it up on the Hub (issue 15).

The catalog stays first: this runs only when the parser could not place the model. A
cached repo answers at once; an uncached one shows "looking up …" if the Hub takes longer
than LOOKING_UP_AFTER_S, then that message is edited into the answer. Only this member's
updates wait (bot.app.PerUserUpdateProcessor locks per user); everyone else is served.
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Message, Update

from advisor.parse import ParsedQuery, parse_query
from bot.app import Context
from bot.replies import send
from hublookup.cache import HubCache
from hublookup.client import HubClient
from hublookup.query import hub_query
from hublookup.resolve import HubAnswer, cached, find_repo_id, resolve, search_term
from hublookup.settings import HubSettings

log = logging.getLogger(__name__)

LOOKING_UP_AFTER_S = 0.4  # a cache hit or a quick Hub never shows the placeholder
_HUB_ERRORS = ("unknown_model", "no_model")


class HubService:
    def __init__(self, settings: HubSettings, cache: HubCache) -> None:
        self.settings = settings
        self.cache = cache
        self.client = HubClient(settings.hf_endpoint, settings.token(), settings.hub_timeout_s)


def service(context: Context) -> HubService:
    app = context.application
    svc = getattr(app, "hub_service", None)
    if svc is None:
        svc = HubService(HubSettings(), HubCache(context.repo))
        app.hub_service = svc  # type: ignore[attr-defined]
    return svc


def wants_hub(text: str, parsed: ParsedQuery) -> bool:
    """The parser could not place a model and the text names a repo id or a model word."""
    if parsed.ok or parsed.error is None or parsed.error.code not in _HUB_ERRORS:
        return False
    return find_repo_id(text) is not None or parsed.error.code == "unknown_model"


async def answer(update: Update, context: Context, text: str, parsed: ParsedQuery) -> None:
    from bot.answer import reply_with_answer

    svc = service(context)
    repo_id = find_repo_id(text)
    assert parsed.error is not None
    if repo_id is None:  # an Ollama tag or a family the catalog lacks: Hub search suggestions
        name = parsed.error.detail.split(":")[0]
        # the name as typed first ("pythia-1.4b"), else its family ("pythia")
        found = await svc.client.search_name(name, search_term(name))
        error = parsed.error.model_copy(
            update={"suggestions": found + [s for s in parsed.error.suggestions if s not in found]}
        )
        await send(update, context, "error", error=error, parsed=parsed)
        return
    task = asyncio.ensure_future(
        resolve(repo_id, svc.cache, svc.client, max_age_days=svc.settings.hub_cache_days)
    )
    placeholder: Message | None = None
    done, _ = await asyncio.wait({task}, timeout=LOOKING_UP_AFTER_S)
    if not done:
        placeholder = await send(update, context, "hub_looking", repo_id=repo_id)
    hub = await task
    if hub.model is None:
        await send(update, context, "hub_error", hub=hub, in_place=placeholder)
        return
    question = hub_query(text, repo_id, hub.model)
    await reply_with_answer(update, context, text, question, hub=hub, in_place=placeholder)


async def reparse(context: Context, canonical: str) -> tuple[ParsedQuery, HubAnswer | None]:
    """A stored question read again (answer buttons): a Hub repo comes from the cache."""
    parsed = parse_query(canonical)
    repo_id = find_repo_id(canonical) if not parsed.ok else None
    if repo_id is None:
        return parsed, None
    hit = await cached(repo_id, service(context).cache)
    if hit is None or hit.model is None:
        return parsed, None
    return hub_query(canonical, repo_id, hit.model), hit
