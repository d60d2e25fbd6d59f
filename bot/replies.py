"""Rendering and sending: one template per reply, in the asker's language, split at section
boundaries when longer than Telegram's 4096 characters, edited in place where possible."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import MessageLimit
from telegram.error import BadRequest, ChatMigrated, Forbidden

from advisor.render import label, render

if TYPE_CHECKING:
    from bot.app import Context

log = logging.getLogger(__name__)

Keyboard = list[list[tuple[str, str]]]  # rows of (label, callback data)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def split_message(text: str, limit: int = MessageLimit.MAX_TEXT_LENGTH) -> list[str]:
    """Cut at blank lines (sections), then at line ends; never inside a line, so never
    inside a tag: every template keeps its tags within one line. Lengths are counted in
    UTF-16 units of the HTML source, which is never shorter than the visible text."""
    if utf16_len(text) <= limit:
        return [text]
    chunks: list[str] = []
    current = ""
    for block in re.split(r"(\n\n)", text):
        pieces = [block] if utf16_len(block) <= limit else re.split(r"(\n)", block)
        for piece in pieces:
            if utf16_len(piece) > limit:  # one enormous line: plain text, cut it hard
                piece = re.sub(r"<[^<>]*>", "", piece)
                while utf16_len(piece) > limit:
                    head, piece = piece[: limit // 2], piece[limit // 2:]
                    chunks.append(head)
            if utf16_len(current + piece) > limit:
                if current.strip():
                    chunks.append(current.strip("\n"))
                current = ""
            current += piece
    if current.strip():
        chunks.append(current.strip("\n"))
    return chunks


def markup(rows: Keyboard | None) -> InlineKeyboardMarkup | None:
    if not rows:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(text, callback_data=data) for text, data in row] for row in rows if row]
    )


def text(context: Context, template: str, /, **ctx: object) -> str:
    return render(template, context.lang, **ctx)


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
    **ctx: object,
) -> Message | None:
    """Render `name` and answer the update: edit the message whose button was pressed
    (edit=True), else reply to the asker's message (quotes it in groups, stays in the
    forum topic). Long replies go out in several messages, the keyboard on the last."""
    body = text(context, template, **ctx)
    return await deliver(update, context, body, keyboard, edit=edit)


async def deliver(
    update: Update, context: Context, body: str, keyboard: Keyboard | None = None, *, edit: bool = False
) -> Message | None:
    chunks = split_message(body)
    kb = markup(keyboard)
    query = update.callback_query
    sent: Message | None = None
    try:
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            if i == 0 and edit and query is not None and isinstance(query.message, Message):
                try:
                    result = await query.edit_message_text(chunk, reply_markup=kb if last else None)
                    sent = result if isinstance(result, Message) else query.message
                except BadRequest as exc:
                    if "not modified" not in str(exc).lower():
                        raise
                    sent = query.message
                continue
            sent = await _send_new(update, context, chunk, kb if last else None)
    except Forbidden:
        # The user blocked the bot or left: nothing to say to them, nothing to crash.
        log.info("cannot write to chat %s: forbidden", update.effective_chat.id if update.effective_chat else "?")
        return None
    return sent


async def _send_new(update: Update, context: Context, chunk: str, kb: InlineKeyboardMarkup | None) -> Message:
    """Reply to the message that asked, or whose button was pressed: in groups that quotes
    it (who is answered is clear) and stays in its forum topic."""
    msg = update.effective_message
    try:
        if isinstance(msg, Message):
            return await msg.reply_text(chunk, reply_markup=kb)
        chat = update.effective_chat
        assert chat is not None
        return await context.bot.send_message(chat.id, chunk, reply_markup=kb)
    except ChatMigrated as exc:
        thread_id = msg.message_thread_id if isinstance(msg, Message) and msg.is_topic_message else None
        return await context.bot.send_message(exc.new_chat_id, chunk, reply_markup=kb, message_thread_id=thread_id)
