"""A question naming a model the catalog lacks, answered from the Hub: the
lookups live in `bot.hub`; this module turns what they found into the reply."""

from __future__ import annotations

import asyncio

from telegram import Message, Update

from advisor.parse import ParsedQuery
from bot import hub
from bot.answer import reply_with_answer
from bot.context import Context
from bot.hub import LOOKING_UP_AFTER_S, looked_up
from bot.replies import send
from hublookup.query import hub_query
from hublookup.resolve import HubAnswer, find_repo_id, search_term, search_texts


async def answer(update: Update, context: Context, text: str, parsed: ParsedQuery) -> None:
    svc = hub.service(context)
    if parsed.ok and parsed.unrecognized is not None:
        await _answer_unrecognized(update, context, svc, text, parsed)
        return
    repo_id = find_repo_id(text)
    assert parsed.error is not None
    if repo_id is None:  # an Ollama tag or a family the catalog lacks: Hub search suggestions
        name = parsed.error.detail.split(":")[0]
        # the name as typed first ("pythia-1.4b"), else its family ("pythia")
        repos = await svc.client.search_name(name, search_term(name))
        error = parsed.error.model_copy(
            update={"suggestions": repos + [s for s in parsed.error.suggestions if s not in repos]}
        )
        await send(update, context, "error", error=error, parsed=parsed)
        return
    found, placeholder = await looked_up(update, context, repo_id)
    if found.model is None:
        await send(update, context, "hub_error", hub=found, in_place=placeholder)
        return
    question = hub_query(text, repo_id, found.model)
    await reply_with_answer(update, context, text, question, hub=found, in_place=placeholder)


async def _answer_unrecognized(
    update: Update, context: Context, svc: hub.HubService, text: str, parsed: ParsedQuery
) -> None:
    """ "olmo2:7b": the answer for a generic model of that size, saying so, with what a Hub
    search for the name found (repos to ask about instead), or that the Hub did not answer."""
    assert parsed.unrecognized is not None
    name = parsed.unrecognized.detail
    task = asyncio.ensure_future(svc.client.search_first(search_texts(name)))
    placeholder: Message | None = None
    done, _ = await asyncio.wait({task}, timeout=LOOKING_UP_AFTER_S)
    if not done:
        placeholder = await send(update, context, "hub_looking", repo_id=name)
    found = await task
    searched = HubAnswer(
        repo_id=name, error="unreachable" if found is None else None, suggestions=found or []
    )
    await reply_with_answer(update, context, text, parsed, hub=searched, in_place=placeholder)
