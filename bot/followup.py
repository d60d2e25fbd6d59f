"""Follow-ups in chats: a message after an answer changes that answer's question.

Private chats: any message is read against the member's last question in the chat.
Groups (privacy mode delivers only replies to the bot): a reply to one of our answers is
read against that answer's question, found through the history id its buttons carry.
"""

from __future__ import annotations

from telegram import Message, Update

from advisor.parse import ParsedQuery, parse_query
from advisor.parse.followup import parse_followup
from bot.callbacks import unpack
from bot.context import Context


async def last_question(update: Update, context: Context) -> ParsedQuery | None:
    user, chat = update.effective_user, update.effective_chat
    if user is None or chat is None:
        return None
    rows = await context.repo.recent_history(user.id, chat.id, limit=1)
    return await _reparsed(context, rows[0].canonical) if rows else None


async def replied_question(update: Update, context: Context) -> ParsedQuery | None:
    """The question behind the answer this message replies to, if it is one of ours."""
    msg, chat = update.effective_message, update.effective_chat
    hid = history_id_of(msg.reply_to_message) if msg is not None else None
    if hid is None or chat is None:
        return None
    entry = await context.repo.history_entry(hid)
    if entry is None or entry.chat_id != chat.id:
        return None
    return await _reparsed(context, entry.canonical)


def read_message(text: str, last: ParsedQuery | None) -> ParsedQuery:
    """A follow-up to `last` when the text reads as one, else a question of its own."""
    if last is not None:
        changed = parse_followup(text, last)
        if changed is not None:
            return changed
    return parse_query(text)


async def _reparsed(context: Context, canonical: str | None) -> ParsedQuery | None:
    from bot import hub  # a question about a Hub model reads its model from the Hub cache

    if canonical is None:  # a line the engine never understood: nothing to change
        return None
    parsed, _ = await hub.reparse(context, canonical)
    if parsed.question_kind == "capability" and parsed.error is None:
        return parsed  # what a card runs: a follow-up names another card
    return parsed if parsed.ok else None  # the catalog changed since: no base to change


def history_id_of(message: Message | None) -> int | None:
    """Answer buttons carry the history id (a|<hid>|…, c|<hid>|…, r|<hid>)."""
    markup = message.reply_markup if message is not None else None
    if markup is None:
        return None
    for row in markup.inline_keyboard:
        for button in row:
            cb = unpack(button.callback_data if isinstance(button.callback_data, str) else None)
            if cb is not None and cb.kind in ("a", "c", "r"):
                return cb.id
    return None
