"""A question naming a model the catalog lacks: look it up on the Hub.

The catalog stays first: this runs only when the parser could not place the model. A
cached repo answers at once; an uncached one shows "looking up …" if the Hub takes longer
than LOOKING_UP_AFTER_S, then that message is edited into the answer. Only this member's
updates wait (bot.user_order.PerUserUpdateProcessor locks per user); everyone else is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import Message, Update
from telegram.error import TelegramError

from advisor.parse import ParsedQuery, parse_query
from bot.context import Context
from bot.replies import send
from hublookup.cache import HubCache
from hublookup.client import HubClient
from hublookup.query import hub_query
from hublookup.resolve import (
    HubAnswer,
    cached,
    find_repo_id,
    resolve,
)
from hublookup.settings import HubSettings

log = logging.getLogger(__name__)

LOOKING_UP_AFTER_S = 0.4  # a cache hit or a quick Hub never shows the placeholder
_HUB_ERRORS = ("unknown_model", "no_model")


class HubService:
    def __init__(self, settings: HubSettings, cache: HubCache) -> None:
        self.settings = settings
        self.cache = cache
        self.client = HubClient(
            settings.hf_endpoint,
            settings.token(),
            settings.hub_timeout_s,
            deadline_s=settings.hub_deadline_s,
        )


def service(context: Context) -> HubService:
    return context.advisor.one(
        HubService, lambda: HubService(HubSettings(), HubCache(context.repo))
    )


def wants_hub(text: str, parsed: ParsedQuery) -> bool:
    """The parser could not place a model and the text names a repo id or a model word, or
    it read a size beside a name the catalog lacks ("olmo2:7b": parsed.unrecognized)."""
    if parsed.ok and parsed.unrecognized is not None:
        return True
    if parsed.ok or parsed.error is None or parsed.error.code not in _HUB_ERRORS:
        return False
    return find_repo_id(text) is not None or parsed.error.code == "unknown_model"


async def looked_up(
    update: Update, context: Context, repo_id: str
) -> tuple[HubAnswer, Message | None]:
    """One repo through the cache and the Hub; "looking up …" shown past LOOKING_UP_AFTER_S."""
    svc = service(context)
    task = asyncio.ensure_future(
        resolve(repo_id, svc.cache, svc.client, max_age_days=svc.settings.hub_cache_days)
    )
    placeholder: Message | None = None
    done, _ = await asyncio.wait({task}, timeout=LOOKING_UP_AFTER_S)
    if not done:
        placeholder = await send(update, context, "hub_looking", repo_id=repo_id)
    return await task, placeholder


# --- the guided conversation's model step (bot.wizard) ----------------------------------------


async def wizard_model(update: Update, context: Context, typed: str) -> tuple[str, str] | None:
    """A repo id typed at the wizard's model step: (repo id, size token such as "1.1b") once
    the Hub (or the cache) has read it; None when the text names no repo id. A repo that
    cannot be read gets the Hub's explanation and a None size token."""
    repo_id = find_repo_id(typed)
    if repo_id is None:
        return None
    hub, placeholder = await looked_up(update, context, repo_id)
    if hub.model is None:
        await send(update, context, "hub_error", hub=hub, in_place=placeholder)
        return repo_id, ""
    if placeholder is not None:
        with contextlib.suppress(TelegramError):
            await placeholder.delete()  # the wizard's next step follows as its own message
    return hub.model.spec.id, f"{hub.model.spec.params_b:.6g}b"


async def wizard_answer(
    context: Context, text: str, repo_id: str
) -> tuple[ParsedQuery, HubAnswer] | None:
    """The finished wizard's line with the repo id in the model's place, read as a Hub
    question; None if the cache no longer holds the repo (the generic size answers)."""
    hit = await cached(repo_id, service(context).cache)
    if hit is None or hit.model is None:
        return None
    return hub_query(text, repo_id, hit.model), hit


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
