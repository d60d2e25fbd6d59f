"""Inline mode: "@Bot 13b fp16" in any chat offers the short answer (figure, verdict, top
pick) as one result, with a button that opens the full answer in a private chat.

The button is a deep link, https://t.me/<bot>?start=<payload>. Telegram allows 1–64
characters of [A-Za-z0-9_-] there (core.telegram.org/bots/features#deep-linking), so the
payload is the question itself, base64url-encoded ("q_…"), when that fits, else a short key
of a row in `inline_links` ("k_…"). /start with such a payload answers the question.

Results are kept per (language, question) for INLINE_CACHE_S in this process, and Telegram
is told to keep them as long (cache_time), per user (is_personal: the language differs).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import re
import time

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    Update,
)
from telegram.constants import ParseMode
from telegram.ext import BaseHandler, CommandHandler, InlineQueryHandler, filters

from advisor.kinds import answered_as
from advisor.parse import parse_query
from bot.answer import compute, kind_text, reply_with_answer
from bot.context import Context
from bot.inline_links import PendingLinks
from bot.lab_store import lab_store
from bot.replies import send, t, text

INLINE_CACHE_S = 60  # short: prices and the catalog change rarely, a typo'd query never again
INLINE_CACHE_LIMIT = 2_000
MAX_PAYLOAD = 64  # Telegram's limit on a deep-link start parameter
MAX_DESCRIPTION = 200
PAYLOAD = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_START = re.compile(r"^/start(?:@\w+)?\s+[qk]_[A-Za-z0-9_-]{1,62}\s*$")


def handlers() -> list[BaseHandler]:
    return [
        CommandHandler(
            "start", start_with_question, filters=filters.ChatType.PRIVATE & filters.Regex(_START)
        ),
        InlineQueryHandler(on_inline_query),
    ]


# --- deep-link payloads ------------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def payload_for(question: str) -> tuple[str, bool]:
    """(payload, whether it is a key that must be stored)."""
    carried = "q_" + _b64(question.encode("utf-8"))
    if len(carried) <= MAX_PAYLOAD:
        return carried, False
    return "k_" + _b64(hashlib.sha256(question.encode("utf-8")).digest()[:12]), True


def question_in(payload: str) -> str | None:
    """The question a "q_" payload carries; None for anything else or a damaged one."""
    if not payload.startswith("q_") or not PAYLOAD.fullmatch(payload):
        return None
    body = payload[2:]
    try:
        question = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return question or None


# --- the per-query cache -------------------------------------------------------------------------


class InlineCache:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], tuple[float, list, InlineQueryResultsButton]] = {}
        self.hits = 0

    def get(self, key: tuple[str, str]) -> tuple[list, InlineQueryResultsButton] | None:
        hit = self._entries.get(key)
        if hit is None or time.monotonic() - hit[0] > INLINE_CACHE_S:
            return None
        self.hits += 1
        return hit[1], hit[2]

    def put(self, key: tuple[str, str], results: list, button: InlineQueryResultsButton) -> None:
        if len(self._entries) >= INLINE_CACHE_LIMIT:
            now = time.monotonic()
            self._entries = {k: v for k, v in self._entries.items() if now - v[0] <= INLINE_CACHE_S}
            if len(self._entries) >= INLINE_CACHE_LIMIT:
                self._entries.clear()
        self._entries[key] = (time.monotonic(), results, button)


def inline_cache(context: Context) -> InlineCache:
    return context.advisor.one(InlineCache, InlineCache)


def pending_links(context: Context) -> PendingLinks:
    """The application's pending inline links (bot.inline_links), one per process."""
    return context.advisor.one(PendingLinks, lambda: PendingLinks(lab_store(context.repo)))


# --- handlers ------------------------------------------------------------------------------------


def _plain(body: str) -> list[str]:
    lines = html.unescape(re.sub(r"<[^<>]+>", "", body)).splitlines()
    return [ln.strip() for ln in lines if ln.strip()]


async def _results(
    context: Context, question: str
) -> tuple[list[InlineQueryResultArticle], InlineQueryResultsButton]:
    if not question:
        return [], InlineQueryResultsButton(t(context, "inline.open_bot"), start_parameter="inline")
    payload, _ = payload_for(question)
    parsed = parse_query(question)
    kind = answered_as(parsed)
    if kind not in ("fit", "out_of_scope"):  # "4090 能跑什么", "8万配一台": its own answer
        body = kind_text(parsed, context)
    elif not parsed.ok:  # small talk too: nothing to share; the private chat says hello
        return [], InlineQueryResultsButton(
            t(context, "inline.unreadable"), start_parameter=payload
        )
    else:
        body = text(context, "inline", rec=compute(parsed, context), parsed=parsed)
    lines = _plain(body)
    link = f"https://t.me/{context.bot.username}?start={payload}"
    article = InlineQueryResultArticle(
        id=hashlib.sha256(f"{context.lang}|{question}".encode()).hexdigest()[:32],
        title=" · ".join(lines[:2])[:MAX_DESCRIPTION],
        description=" ".join(lines[2:])[:MAX_DESCRIPTION] or None,
        input_message_content=InputTextMessageContent(body, parse_mode=ParseMode.HTML),
        reply_markup=InlineKeyboardMarkup(
            [[InlineKeyboardButton(t(context, "inline.open_full"), url=link)]]
        ),
    )
    return [article], InlineQueryResultsButton(
        t(context, "inline.open_full"), start_parameter=payload
    )


async def on_inline_query(update: Update, context: Context) -> None:
    query = update.inline_query
    assert query is not None
    question = re.sub(r"\s+", " ", query.query).strip()
    cache = inline_cache(context)
    key = (context.lang, question.lower())
    hit = cache.get(key)
    if hit is None:
        hit = await _results(context, question)
        cache.put(key, *hit)
    results, button = hit
    payload = button.start_parameter or ""
    if payload.startswith("k_"):
        # each asker owns a copy, cached answer or not (/forget deletes theirs); the key is
        # the one their results carry, which a cached answer took from its first asker's
        # spelling: the question stored is the one that key was made from
        asked = question if payload_for(question)[0] == payload else None
        asked = asked or pending_links(context).query(payload[2:])
        asked = asked or await lab_store(context.repo).link_query(payload[2:]) or question
        pending_links(context).note(query.from_user.id, payload[2:], asked)
    await query.answer(results, cache_time=INLINE_CACHE_S, is_personal=True, button=button)


async def start_with_question(update: Update, context: Context) -> None:
    """/start q_… or k_…: the full answer to the question an inline result carried."""
    payload = (context.args or [""])[0]
    question = question_in(payload)
    if question is None and payload.startswith("k_"):
        key = payload[2:]
        question = pending_links(context).query(key) or await lab_store(context.repo).link_query(
            key
        )
    if not question:
        await send(update, context, "inline_expired")
        return
    await reply_with_answer(update, context, question, parse_query(question))
