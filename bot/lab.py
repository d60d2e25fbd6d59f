"""/lab: the machines a group owns (its admins change them, every member reads them), or in
a private chat the user's own cards; and the section that answers every question in that
chat against them first.

Admins are Telegram's chat administrators (getChatAdministrators, kept `ADMIN_CACHE_S`),
checked on every change: a typed /lab line, a reply to the "add" prompt, and every button,
whatever its callback data says. Buttons carry the machine's row id (`bot.callbacks`, kind
"m"); a row id from another chat changes nothing, since every write is scoped to the chat
the button was pressed in.
"""

from __future__ import annotations

import re
import time
from typing import Any

from markupsafe import Markup
from telegram import ForceReply, Message, Update
from telegram.error import TelegramError
from telegram.ext import (
    BaseHandler,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    filters,
)

from advisor import catalog
from advisor.parse import ParsedQuery
from advisor.parse.machines import parse_machine_line
from advisor.recommend.owned import Machine, judge_machines
from bot.callbacks import pack, unpack
from bot.context import Context, is_anonymous_admin
from bot.delivery import answer_soon
from bot.lab_store import MAX_MACHINES, lab_store
from bot.replies import Keyboard, send, t, text
from bot.reply_filters import reply_to_prompt

ADMIN_CACHE_S = 60.0  # Telegram's admin list, per chat: a promotion shows within a minute
ADMIN_CACHE_LIMIT = 10_000
PROMPT_MARK = "🛠"  # the add prompt starts with it: a reply to such a message is a /lab line
MAX_LINES = MAX_MACHINES  # lines read from one message
EDITS_KEY = "lab_edits"  # chat_data: edit prompt message id -> the machine id it edits
MAX_OPEN_EDITS = 20
_REMOVE = re.compile(r"^(?:rm|remove|del|delete|删除|删)\s+(.+)$", re.I | re.S)
_ADD = re.compile(r"^(?:add|edit|添加|修改)\s+", re.I)


def handlers() -> list[BaseHandler]:
    return [
        CommandHandler("lab", lab),
        CallbackQueryHandler(on_button, pattern=r"^m\|"),
        MessageHandler(
            filters.REPLY & filters.TEXT & ~filters.COMMAND & reply_to_prompt(PROMPT_MARK), on_reply
        ),
        ChatMemberHandler(on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER),
    ]


# --- who may change ----------------------------------------------------------------------------


class AdminCache:
    """Each chat's administrator ids, asked of Telegram at most once per ADMIN_CACHE_S."""

    def __init__(self) -> None:
        self._by_chat: dict[int, tuple[float, frozenset[int]]] = {}

    async def admins(self, context: Context, chat_id: int) -> frozenset[int]:
        now = time.monotonic()
        hit = self._by_chat.get(chat_id)
        if hit is not None and now - hit[0] < ADMIN_CACHE_S:
            return hit[1]
        members = await context.bot.get_chat_administrators(chat_id)
        ids = frozenset(m.user.id for m in members)
        if len(self._by_chat) > ADMIN_CACHE_LIMIT:
            self._by_chat.clear()
        self._by_chat[chat_id] = (now, ids)
        return ids

    def forget(self, chat_id: int) -> None:
        self._by_chat.pop(chat_id, None)


def admin_cache(context: Context) -> AdminCache:
    return context.advisor.one(AdminCache, AdminCache)


async def may_change(update: Update, context: Context) -> bool:
    """In a private chat the list is the user's own; in a group only its admins (an admin
    posting as the group included) change it. When Telegram cannot say, nobody may."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None:
        return False
    if chat.type == "private":
        return True
    if update.callback_query is None and is_anonymous_admin(update):
        return True
    if user is None:
        return False
    try:
        return user.id in await admin_cache(context).admins(context, chat.id)
    except TelegramError:
        return False


# --- the list ----------------------------------------------------------------------------------


def machine_line(m: Machine) -> str:
    """A machine as the line that would register it again (shown in the edit prompt)."""
    parts = [
        m.name,
        f"{m.count}x {catalog.gpus()[m.gpu_id].name if m.gpu_id in catalog.gpus() else m.gpu_id}",
    ]
    if m.price_per_card_hour is not None:
        sign = "$" if m.currency == "USD" else "¥"
        parts.append(f"{sign}{m.price_per_card_hour:g}/h")
    if m.note:
        parts.append(m.note)
    return " ".join(parts)


def _keyboard(context: Context, machines: list[Machine]) -> Keyboard:
    rows: Keyboard = [
        [
            (t(context, "lab.edit", name=m.name[:20]), pack("m", m.id or 0, "e")),
            (t(context, "lab.remove", name=m.name[:20]), pack("m", m.id or 0, "r")),
        ]
        for m in machines
    ]
    if len(machines) < MAX_MACHINES:
        rows.append([(t(context, "lab.add"), pack("m", 0, "a"))])
    return rows


async def show(update: Update, context: Context, *, edit: bool = False, **notice: Any) -> None:
    chat = update.effective_chat
    assert chat is not None
    machines = await lab_store(context.repo).machines(chat.id)
    can_change = await may_change(update, context)
    names = catalog.gpus()
    rows = [(m, names[m.gpu_id].name if m.gpu_id in names else m.gpu_id) for m in machines]
    notice.setdefault("problem", None)
    notice.setdefault("detail", "")
    notice.setdefault("saved", [])
    notice.setdefault("removed", None)
    await send(
        update,
        context,
        "lab",
        _keyboard(context, machines),
        edit=edit,
        machines=rows,
        group=chat.type != "private",
        can_change=can_change,
        **notice,
    )


async def lab(update: Update, context: Context) -> None:
    """/lab shows the list; /lab <line> adds or replaces; /lab rm <name> removes."""
    msg, chat = update.effective_message, update.effective_chat
    assert msg is not None and chat is not None
    args = re.sub(r"^/\w+(@\w+)?\s*", "", msg.text or "", count=1).strip()
    if not args:
        await show(update, context)
        return
    if not await may_change(update, context):
        await show(update, context, problem="not_admin")
        return
    if m := _REMOVE.match(args):
        await _remove_named(update, context, m.group(1).strip())
        return
    await _save_lines(update, context, _ADD.sub("", args, count=1))


async def _remove_named(update: Update, context: Context, name: str) -> None:
    chat = update.effective_chat
    assert chat is not None
    store = lab_store(context.repo)
    found = next((m for m in await store.machines(chat.id) if m.name.lower() == name.lower()), None)
    if found is None or found.id is None:
        await show(update, context, problem="unknown", detail=name[:40])
        return
    await store.remove(chat.id, found.id)
    await show(update, context, removed=found.name)


async def _save_lines(
    update: Update, context: Context, lines_text: str, replaces: int | None = None
) -> None:
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None
    machines: list[Machine] = []
    problem, detail = None, ""
    for line in [ln for ln in lines_text.splitlines() if ln.strip()][:MAX_LINES]:
        read = parse_machine_line(line)
        if read.error is not None:
            problem = problem or read.error
            detail = detail or read.detail
            continue
        machines.extend(read.machines)
    saved: list[str] = []
    if machines:
        by_user = user.id if user is not None and not is_anonymous_admin(update) else None
        outcome = await lab_store(context.repo).save(
            chat.id, machines, by_user, replaces=replaces if len(machines) == 1 else None
        )
        if outcome == "full":
            problem, detail = "full", str(MAX_MACHINES)
        else:
            saved = [m.name for m in machines]
    await show(update, context, problem=problem, detail=detail, saved=saved)


async def on_reply(update: Update, context: Context) -> None:
    """A reply to the add prompt: its lines are machines. A reply to an ✏️ prompt replaces
    the machine it was opened for, even under a new name."""
    msg = update.effective_message
    assert msg is not None and msg.text is not None
    if not await may_change(update, context):
        await show(update, context, problem="not_admin")
        return
    replied = msg.reply_to_message
    edits = context.chat_data.get(EDITS_KEY, {}) if context.chat_data is not None else {}
    replaces = edits.pop(str(replied.message_id), None) if replied is not None else None
    await _save_lines(update, context, msg.text, replaces=replaces)


async def _prompt(update: Update, context: Context, current: Machine | None) -> None:
    """Ask for a typed line with a ForceReply: in a group, privacy mode delivers replies to
    the bot's own messages, not plain text."""
    chat, user, query = update.effective_chat, update.effective_user, update.callback_query
    assert chat is not None and user is not None
    # Markup: the template autoescapes, and an escaped link reached the chat as text (no
    # mention, so the selective ForceReply addressed nobody)
    mention = Markup('<a href="tg://user?id={}">{}</a>').format(user.id, user.first_name)
    body = (
        PROMPT_MARK
        + " "
        + text(
            context,
            "lab_prompt",
            mention=mention,
            current=machine_line(current) if current else None,
        )
    )
    where = query.message if query is not None else None
    thread = (
        where.message_thread_id if isinstance(where, Message) and where.is_topic_message else None
    )
    sent = await context.bot.send_message(
        chat.id,
        body,
        message_thread_id=thread,
        reply_markup=ForceReply(
            selective=True,
            input_field_placeholder=(machine_line(current) if current else "node1 4x a100 40g")[
                :64
            ],
        ),
    )
    if current is not None and current.id is not None and context.chat_data is not None:
        # chat_data is persisted as JSON: string keys; only the last few prompts are kept
        edits = context.chat_data.setdefault(EDITS_KEY, {})
        edits[str(sent.message_id)] = current.id
        for old in list(edits)[:-MAX_OPEN_EDITS]:
            del edits[old]


async def on_button(update: Update, context: Context) -> None:
    query, chat = update.callback_query, update.effective_chat
    assert query is not None and chat is not None
    cb = unpack(query.data)
    if cb is None or cb.kind != "m" or len(cb.args) != 1 or cb.args[0] not in ("a", "e", "r", "d"):
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return
    if not await may_change(update, context):
        await query.answer(t(context, "lab.admins_only"), show_alert=True)
        return
    action, store = cb.args[0], lab_store(context.repo)
    if action == "a":
        await answer_soon(query)
        await _prompt(update, context, None)
    elif action == "e":
        found = await store.machine(chat.id, cb.id)
        if found is None:
            await query.answer(t(context, "lab.gone"), show_alert=True)
            return
        await answer_soon(query)
        await _prompt(update, context, found)
    elif action == "r":
        found = await store.machine(chat.id, cb.id)
        if found is None or not await store.remove(chat.id, cb.id):
            await query.answer(t(context, "lab.gone"), show_alert=True)
            return
        await query.answer(t(context, "lab.removed", name=found.name))
        await show(update, context, edit=True, removed=found.name)
    else:  # "d": the group's machines, from the button under /forget in the group
        count = await store.forget_chat(chat.id)
        await answer_soon(query)
        await send(update, context, "lab_forgotten", edit=True, count=count)


async def on_my_chat_member(update: Update, context: Context) -> None:
    """The bot was removed from a group: the group's machines go with it (nobody can ask
    for them there any more, and a group that adds the bot again starts fresh)."""
    change, chat = update.my_chat_member, update.effective_chat
    if change is None or chat is None or chat.type == "private":
        return
    if change.new_chat_member.status in ("left", "kicked"):
        await lab_store(context.repo).forget_chat(chat.id)
        admin_cache(context).forget(chat.id)


# --- answers -----------------------------------------------------------------------------------


async def has_machines(update: Update, context: Context) -> bool:
    chat = update.effective_chat
    return chat is not None and bool(await lab_store(context.repo).machines(chat.id))


async def owned_section(
    update: Update, context: Context, parsed: ParsedQuery, short: bool = False
) -> str:
    """The chat's own machines judged for the question, to stand before the rentals; "" when
    the chat registered none (or the job has no per-card figure). `short`: the machine to
    use alone (the first reply), not every machine's line."""
    chat = update.effective_chat
    if chat is None or parsed.workload is None:
        return ""
    machines = await lab_store(context.repo).machines(chat.id)
    if not machines:
        return ""
    own = judge_machines(parsed.workload, machines)
    if own is None:
        return ""
    body = text(
        context,
        "lab_first",
        own=own,
        group=chat.type != "private",
        chosen=context.lab_chosen,
        short=short,
    )
    return body + "\n\n"
