"""Rendering and sending: one template per reply, in the asker's language, split at section
boundaries when longer than Telegram's 4096 characters, edited in place where possible."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Hashable
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from telegram import Message, Update
from telegram.constants import MessageLimit
from telegram.error import BadRequest, ChatMigrated, Forbidden

from advisor.memo import Memo
from advisor.render import label, render

if TYPE_CHECKING:
    from bot.context import Context

log = logging.getLogger(__name__)

Keyboard = list[list[tuple[str, str]]]  # rows of (label, callback data)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)[^<>]*>")


def visible_len(text: str) -> int:
    """What Telegram counts against its 4096 limit: "characters after entities parsing"
    (Bot API, sendMessage `text`), i.e. the shown text without tags, entities decoded, in
    UTF-16 code units. Counting the HTML source instead cut answers that fit (a lab group's
    answer carries ~15% markup) into two messages."""
    return utf16_len(html.unescape(_TAG.sub("", text)))


def _cut_plain(segment: str, limit: int) -> list[str]:
    """Last resort for one enormous segment: drop its tags, cut the text, escape each piece
    again (so no entity is cut in half)."""
    plain = html.unescape(_TAG.sub("", segment))
    pieces, current = [], ""
    for ch in plain:
        if utf16_len(html.escape(current + ch, quote=False)) > limit:
            pieces.append(html.escape(current, quote=False))
            current = ""
        current += ch
    if current.strip():
        pieces.append(html.escape(current, quote=False))
    return pieces


def split_message(text: str, limit: int = MessageLimit.MAX_TEXT_LENGTH) -> list[str]:
    """Cut a reply into messages Telegram accepts: only at line ends where no tag is open
    (user text with a newline inside <b>…</b> must not cut the tag), preferring blank lines
    (section boundaries). Lengths are Telegram's: UTF-16 units of the visible text
    (visible_len); segments are whole lines with no tag open, so their lengths add up."""
    if visible_len(text) <= limit:
        return [text]
    segments: list[str] = []  # runs of whole lines that end with no tag open
    stack: list[str] = []
    current = ""
    for line in text.split("\n"):
        for m in _TAG.finditer(line):
            if m.group(1):
                if stack and stack[-1] == m.group(2).lower():
                    stack.pop()
            else:
                stack.append(m.group(2).lower())
        current += line + "\n"
        if not stack:
            segments.append(current)
            current = ""
    if current:
        segments.append(current)
    chunks: list[str] = []
    chunk = ""
    for segment in segments:
        if visible_len(segment) > limit:
            if chunk.strip():
                chunks.append(chunk.strip("\n"))
            chunks.extend(_cut_plain(segment, limit))
            chunk = ""
            continue
        if visible_len(chunk + segment) > limit:
            # back up to the last blank line in this chunk if that keeps it reasonably full
            cut = chunk.rfind("\n\n")
            if cut > limit // 2:
                chunks.append(chunk[:cut].strip("\n"))
                chunk = chunk[cut:]
            else:
                chunks.append(chunk.strip("\n"))
                chunk = ""
            if visible_len(chunk + segment) > limit:
                chunks.append(chunk.strip("\n"))
                chunk = ""
        chunk += segment
    if chunk.strip():
        chunks.append(chunk.strip("\n"))
    return [c for c in chunks if c.strip()]


def markup(rows: Keyboard | None) -> dict | None:
    """An inline keyboard as the Bot API's JSON (`InlineKeyboardMarkup`), sent through PTB's
    `api_kwargs`: building PTB's InlineKeyboardButton objects and turning them back into
    dicts cost ~250 us for a wizard step's keyboard (12 buttons; bench/api_cost.py), sent
    with almost every update, for objects nothing reads. Only callback buttons are built
    here; other kinds (URL, switch-inline) are built as PTB objects where they are used."""
    if not rows:
        return None
    return {
        "inline_keyboard": [
            [{"text": text, "callback_data": data} for text, data in row] for row in rows if row
        ]
    }


def _with_markup(kb: dict | None) -> dict:
    """`api_kwargs` carrying a keyboard (or none): PTB adds them to the call's parameters."""
    return {"reply_markup": kb} if kb is not None else {}


# Rendered replies by template, language and everything passed to it (advisor.memo): the
# templates read nothing else (labels, formulas and card notes are data loaded once). Keyed
# only when every value has an exact hashable form (`_frozen`), and never for the answer
# views, which bot.answer remembers whole.
_RENDERS: Memo[str] = Memo("render", 1024)
_TOO_BIG_TO_KEY = 20_000  # characters of one model's JSON: larger ones are not remembered


def _frozen(value: object) -> Hashable:
    """An exact, hashable stand-in for a template value, tagged with its type so that
    different values never share a key. Raises TypeError for anything else."""
    if value is None or isinstance(value, str | int | float | bool):
        return (type(value).__name__, value)
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, BaseModel):
        dumped = value.model_dump_json()
        if len(dumped) <= _TOO_BIG_TO_KEY:
            return (type(value).__qualname__, dumped)
    elif is_dataclass(value) and not isinstance(value, type):
        # the engine's rows (advisor.recommend's Price and Option): each field, exactly
        return (
            type(value).__qualname__,
            tuple(_frozen(getattr(value, f.name)) for f in fields(value)),
        )
    raise TypeError(type(value).__name__)


def text(context: Context, template: str, /, **ctx: Any) -> str:
    try:
        key = (template, context.lang, _frozen(ctx))
    except TypeError:
        return render(template, context.lang, **ctx)
    return _RENDERS.get(key, lambda: render(template, context.lang, **ctx))


def t(context: Context, key: str, **fmt: object) -> str:
    return label(context.lang, key, **fmt)


async def send(
    update: Update,
    context: Context,
    template: str,
    keyboard: Keyboard | None = None,
    /,
    *,
    edit: bool = False,
    in_place: Message | None = None,
    **ctx: object,
) -> Message | None:
    """Render `template` and answer the update: edit the message whose button was pressed
    (edit=True), else reply to the asker's message (quotes it in groups, stays in the
    forum topic). Long replies go out in several messages, the keyboard on the last."""
    body = text(context, template, **ctx)
    return await deliver(update, context, body, keyboard, edit=edit, in_place=in_place)


async def deliver(
    update: Update,
    context: Context,
    body: str,
    keyboard: Keyboard | None = None,
    *,
    edit: bool = False,
    in_place: Message | None = None,  # a message of ours to edit ("looking up …", bot.hub)
) -> Message | None:
    chunks = split_message(body)
    kb = markup(keyboard)
    query = update.callback_query
    sent: Message | None = None
    edited: Message | None = None  # part one went into a message of ours, edited in place
    try:
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            if i == 0 and in_place is not None:
                try:
                    result = await in_place.edit_text(
                        chunk, api_kwargs=_with_markup(kb if last else None)
                    )
                    sent = edited = result if isinstance(result, Message) else in_place
                    continue
                except BadRequest as exc:  # the placeholder is gone: answer anew
                    log.info("could not edit the placeholder: %s", exc)
            if i == 0 and edit and query is not None and isinstance(query.message, Message):
                try:
                    result = await query.edit_message_text(
                        chunk, api_kwargs=_with_markup(kb if last else None)
                    )
                    sent = result if isinstance(result, Message) else query.message
                except BadRequest as exc:
                    if "not modified" not in str(exc).lower():
                        raise
                    sent = query.message
                edited = sent
                continue
            # The rest of an answer that went into an edited message quotes that message:
            # in a private chat too, it then reads as that answer's continuation (it went
            # out bare there, like a second answer to the press).
            sent = await _send_new(update, context, chunk, kb if last else None, quote=edited)
    except Forbidden:
        # The user blocked the bot or left: nothing to say to them, nothing to crash.
        log.info(
            "cannot write to chat %s: forbidden",
            update.effective_chat.id if update.effective_chat else "?",
        )
        return None
    return sent


async def _send_new(
    update: Update, context: Context, chunk: str, kb: dict | None, quote: Message | None = None
) -> Message:
    """Reply to the message that asked, or whose button was pressed: in groups that quotes
    it (who is answered is clear) and stays in its forum topic. `quote`: a message of ours
    this chunk continues, quoted in any chat."""
    msg = update.effective_message
    try:
        if quote is not None:
            return await quote.reply_text(chunk, do_quote=True, api_kwargs=_with_markup(kb))
        if isinstance(msg, Message):
            return await msg.reply_text(chunk, api_kwargs=_with_markup(kb))
        chat = update.effective_chat
        assert chat is not None
        return await context.bot.send_message(chat.id, chunk, api_kwargs=_with_markup(kb))
    except ChatMigrated as exc:
        thread_id = (
            msg.message_thread_id if isinstance(msg, Message) and msg.is_topic_message else None
        )
        return await context.bot.send_message(
            exc.new_chat_id, chunk, message_thread_id=thread_id, api_kwargs=_with_markup(kb)
        )
