"""Quick commands and the buttons under answers. Each handler: parse → advisor → template."""

from __future__ import annotations

import re

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler, MessageHandler, filters

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.fit import CONTEXT_PROBE_MODEL, card_fit, fit_for_gpu
from advisor.models.workload import Workload
from advisor.parse import ParsedQuery, parse_query
from advisor.recommend import Price, cheapest_price
from advisor.recommend.grid import precision_grid
from bot import followup, hub, hub_questions
from bot.answer import (
    CHART,
    SECTIONS,
    apply_change,
    currency_for,
    reply_with_answer,
    show_chart,
    show_view,
)
from bot.callbacks import pack, unpack
from bot.choices import answer_choices
from bot.context import Context, is_anonymous_admin
from bot.delivery import answer_soon
from bot.inline import pending_links
from bot.lab_store import lab_store
from bot.measured import report_summary
from bot.replies import send, t
from bot.wizard import refuse_not_owner

GPU_LIST_LIMIT = 60
GPU_NAME_SHOWN = 60  # characters of an unknown card's name echoed back


def handlers() -> list[BaseHandler]:
    return [
        CommandHandler("vram", vram),
        CommandHandler("gpus", gpus),
        CommandHandler("gpu", gpu),
        CommandHandler("fit", fit),
        CommandHandler("history", history),
        CommandHandler("lang", lang),
        CommandHandler("help", help_),
        CommandHandler("about", about),
        CommandHandler("forget", forget),
        CommandHandler("stats", stats),
        CommandHandler("cancel", nothing_to_cancel),
        CallbackQueryHandler(on_answer_button, pattern=r"^[ach]\|"),
        CallbackQueryHandler(on_lang_button, pattern=r"^l\|"),
        CallbackQueryHandler(on_forget_button, pattern=r"^f\|"),
        CallbackQueryHandler(on_stale_button),  # anything else: an old wizard, a forged payload
        MessageHandler(filters.ChatType.PRIVATE & filters.TEXT & ~filters.COMMAND, free_text),
        MessageHandler(
            filters.ChatType.GROUPS & filters.REPLY & filters.TEXT & ~filters.COMMAND, group_reply
        ),
        MessageHandler(
            filters.UpdateType.MESSAGE
            & filters.ChatType.PRIVATE
            & ~filters.TEXT
            & ~filters.StatusUpdate.ALL,
            not_text,
        ),
        # Last: a command none of the above knows ("/foo", "/0") in a private chat gets the
        # list of commands instead of silence. In groups other bots' commands are left alone.
        MessageHandler(filters.ChatType.PRIVATE & filters.COMMAND, unknown_command),
    ]


def _args_text(update: Update) -> str:
    msg = update.effective_message
    raw = (msg.text or "") if msg else ""
    return re.sub(r"^/\w+(@\w+)?\s*", "", raw, count=1)


def _price(gpu_id: str, context: Context) -> Price | None:
    prices = catalog.load_prices(context.settings.prices_file)
    return cheapest_price(gpu_id, prices, currency_for(context))


# --- quick questions -------------------------------------------------------------------------


async def vram(update: Update, context: Context) -> None:
    query = _args_text(update)
    if not query.strip():
        await send(update, context, "vram_usage")
        return
    await _answer(update, context, query, parse_query(query))


async def free_text(update: Update, context: Context) -> None:
    """Private chat, no wizard running: the text is a question, or changes the last one."""
    msg = update.effective_message
    assert msg is not None and msg.text is not None
    last = await followup.last_question(update, context)
    await _answer(update, context, msg.text, followup.read_message(msg.text, last))


async def _answer(update: Update, context: Context, text: str, parsed: ParsedQuery) -> None:
    """A question of any kind: "4090 能跑什么模型", "预算8万配一台", "你好" are answered by
    their kind (bot.answer.reply_with_answer, advisor.kinds); a model the catalog lacks is
    looked up on the Hub first."""
    if hub.wants_hub(text, parsed):  # a model the catalog lacks: the Hub
        await hub_questions.answer(update, context, text, parsed)
        return
    await reply_with_answer(update, context, text, parsed)


async def unknown_command(update: Update, context: Context) -> None:
    await send(update, context, "unknown_command")


async def not_text(update: Update, context: Context) -> None:
    """A sticker, photo, voice note… in a private chat: say, briefly, that questions are text."""
    await send(update, context, "not_text")


async def group_reply(update: Update, context: Context) -> None:
    """Group, no wizard running for this member: a reply to one of our messages is a question;
    a reply to one of our answers may change that answer's question."""
    msg = update.effective_message
    assert msg is not None and msg.text is not None
    if (
        msg.reply_to_message is None
        or msg.reply_to_message.from_user is None
        or msg.reply_to_message.from_user.id != context.bot.id
    ):
        return
    last = await followup.replied_question(update, context)
    await _answer(update, context, msg.text, followup.read_message(msg.text, last))


# --- the catalog ----------------------------------------------------------------------------------


async def gpus(update: Update, context: Context) -> None:
    query = _args_text(update).strip()
    cards, min_gb = catalog.search_gpus(query)
    rows = [(g, _price(g.id, context)) for g in cards[:GPU_LIST_LIMIT]]
    await send(update, context, "gpus", rows=rows, query=query, min_gib=min_gb, total=len(cards))


async def gpu(update: Update, context: Context) -> None:
    await _card(update, context, "gpu")


async def fit(update: Update, context: Context) -> None:
    await _card(update, context, "fit")


async def _card(update: Update, context: Context, template: str) -> None:
    arg = _args_text(update).strip()
    if not arg:
        await send(update, context, "card_usage", command=template)
        return
    m = re.match(r"(\d+)\s*[x×*]\s*(.+)", arg)
    count = int(m.group(1)) if m else 1
    name = m.group(2) if m else arg
    spec = catalog.find_gpu(name)
    if spec is None or not 1 <= count <= 8:
        # a pasted paragraph is echoed as its start, so the reply stays one message
        shown = name if len(name) <= GPU_NAME_SHOWN else name[: GPU_NAME_SHOWN - 1] + "…"
        await send(
            update, context, "unknown_gpu", name=shown, suggestions=catalog.close_gpu_names(name)
        )
        return
    await _show_card(update, context, template, spec, count)


async def _show_card(
    update: Update, context: Context, template: str, spec: GpuSpec, count: int
) -> None:
    # a catalog card, or one known by its memory ("biggest model on 24G")
    fits = card_fit(spec.id, count) if spec.id in catalog.gpus() else fit_for_gpu(spec, count)
    probe = catalog.models()[CONTEXT_PROBE_MODEL]
    grid = precision_grid(Workload(model=probe.id), spec, count) if template == "gpu" else []
    await send(
        update,
        context,
        template,
        gpu=spec,
        count=count,
        fit=fits,
        price=_price(spec.id, context),
        grid=grid,
        grid_model=probe.name,
    )


# --- history, language, forget, stats ------------------------------------------------------------


async def history(update: Update, context: Context) -> None:
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    entries = await context.repo.recent_history(user.id, chat.id, limit=10)
    keyboard = [
        [(f"↻ {i}", pack("h", e.id)) for i, e in enumerate(entries[j : j + 5], start=j + 1)]
        for j in range(0, len(entries), 5)
    ]
    await send(update, context, "history", keyboard, entries=entries)


async def lang(update: Update, context: Context) -> None:
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    # An anonymous admin's menu belongs to whoever presses (owner 0); the admin check on the
    # group buttons still applies to the presser.
    owner = 0 if is_anonymous_admin(update) else user.id
    rows = [
        [
            (t(context, "button.lang_zh"), pack("l", owner, "u", "zh")),
            (t(context, "button.lang_en"), pack("l", owner, "u", "en")),
        ]
    ]
    if chat.type != "private":
        rows.append(
            [
                (t(context, "button.group_zh"), pack("l", owner, "g", "zh")),
                (t(context, "button.group_en"), pack("l", owner, "g", "en")),
            ]
        )
    await send(update, context, "lang", rows, group=chat.type != "private")


async def on_lang_button(update: Update, context: Context) -> None:
    query, user, chat = update.callback_query, update.effective_user, update.effective_chat
    assert query is not None and user is not None and chat is not None
    cb = unpack(query.data)
    if (
        cb is None
        or len(cb.args) != 2
        or cb.args[1] not in ("zh", "en")
        or cb.args[0] not in ("u", "g")
    ):
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return
    if cb.id not in (0, user.id):
        await refuse_not_owner(update, context, cb.id)
        return
    target, choice = cb.args
    if target == "g":
        member = await context.bot.get_chat_member(chat.id, user.id)
        if member.status not in ("administrator", "creator"):
            await query.answer(t(context, "alert.admins_only"), show_alert=True)
            return
        await context.repo.set_chat_language(chat.id, choice)
    else:
        await context.repo.set_user_language(user.id, choice)
    context.lang = choice
    await answer_soon(query)
    await send(update, context, "lang_set", edit=True, group_default=target == "g")


async def forget(update: Update, context: Context) -> None:
    """Per person: the buttons below. In a group, also what belongs to the group (its /lab
    machines), which its admins delete with a button of their own (bot.lab checks them)."""
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    rows = [
        [
            (t(context, "button.forget_yes"), pack("f", user.id, "y")),
            (t(context, "button.forget_no"), pack("f", user.id, "n")),
        ]
    ]
    group = chat.type != "private"
    machines = len(await lab_store(context.repo).machines(chat.id)) if group else 0
    if machines:
        rows.append([(t(context, "lab.forget_group"), pack("m", 0, "d"))])
    await send(update, context, "forget_confirm", rows, group=group, machines=machines)


async def on_forget_button(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    assert query is not None and user is not None
    cb = unpack(query.data)
    if cb is None or cb.args not in (("y",), ("n",)):
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return
    if cb.id != user.id:
        await refuse_not_owner(update, context, cb.id)
        return
    await answer_soon(query)
    if cb.args == ("n",):
        await send(update, context, "forget_kept", edit=True)
        return
    pending_links(context).forget(user.id)  # an inline question not written yet
    deleted = await context.repo.forget_user(user.id)
    context.application.persistence.forget_written()  # type: ignore[union-attr]
    # The in-memory copies too, or the next persistence write would bring them back.
    context.application.drop_user_data(user.id)
    if user.id in context.application.chat_data:  # the private chat's data
        context.application.drop_chat_data(user.id)
    await send(update, context, "forget_done", edit=True, deleted=deleted)


async def stats(update: Update, context: Context) -> None:
    user = update.effective_user
    assert user is not None
    if user.id not in context.settings.admin_user_ids:
        await send(update, context, "not_admin")
        return
    await send(
        update,
        context,
        "stats",
        stats=await context.repo.stats(),
        reports=await report_summary(context),
    )


# --- help, about, cancel ----------------------------------------------------------------------------


async def help_(update: Update, context: Context) -> None:
    chat = update.effective_chat
    await send(
        update,
        context,
        "help",
        group=chat is not None and chat.type != "private",
        bot_username=context.bot.username,
    )


async def about(update: Update, context: Context) -> None:
    await send(
        update,
        context,
        "about",
        catalog_version=catalog.catalog_version(),
        gpu_count=len(catalog.gpus()),
        model_count=len(catalog.models()),
        custom_prices=context.settings.prices_file is not None,
    )


async def nothing_to_cancel(update: Update, context: Context) -> None:
    await send(update, context, "nothing_to_cancel")


# --- buttons under answers and history ---------------------------------------------------------------


async def on_answer_button(update: Update, context: Context) -> None:
    query, user = update.callback_query, update.effective_user
    assert query is not None and user is not None
    cb = unpack(query.data)
    entry = await context.repo.history_entry(cb.id) if cb is not None else None
    if cb is None or entry is None or entry.canonical is None:
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return
    if entry.user_id != user.id:
        await refuse_not_owner(update, context, entry.user_id)
        return
    if cb.kind == "a" and cb.args == (CHART,):
        await show_chart(update, context, entry.canonical)
        return
    if cb.kind == "a" and cb.args and cb.args[0] in ("p", "g", "m", "d", "r", "w", *SECTIONS):
        await answer_soon(query)
        await show_view(update, context, entry.id, cb.args[0], entry.canonical)
        return
    if cb.kind == "h" and not cb.args:
        await answer_soon(query)
        parsed, hub_answer = await hub.reparse(context, entry.canonical)
        await reply_with_answer(update, context, entry.raw_text, parsed, hub=hub_answer)
        return
    if cb.kind == "c" and len(cb.args) == 2 and cb.args[0] in ("f", "g", "m"):
        what, choice = cb.args
        parsed, hub_answer = await hub.reparse(context, entry.canonical)
        valid = (
            choice == "x"
            and what == "m"
            or choice.isdigit()
            and int(choice) < len(answer_choices(what))
        )
        if parsed.ok and valid:
            await query.answer(t(context, "alert.working"))
            await reply_with_answer(
                update,
                context,
                entry.raw_text,
                apply_change(parsed, what, choice),
                edit=True,
                hub=hub_answer,
            )
            return
    await query.answer(t(context, "alert.expired"), show_alert=True)


async def on_stale_button(update: Update, context: Context) -> None:
    """A wizard button whose conversation is over, one from another member, or a payload we
    never made: say so, change nothing."""
    query, user = update.callback_query, update.effective_user
    assert query is not None and user is not None
    cb = unpack(query.data)
    if cb is not None and cb.kind == "w" and cb.id not in (0, user.id):
        await refuse_not_owner(update, context, cb.id)
        return
    await query.answer(t(context, "alert.expired"), show_alert=True)
