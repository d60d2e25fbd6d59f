"""`build_application(builder, settings)`: the one factory, used by production, the local
try-out, the tests and the load bench. It wires handlers, persistence, the rate limiter,
the command menus, the error handler and the update order (`user_order`); the handlers live
in `commands` and `wizard`."""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import logging
import warnings

from telegram import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    BotCommandScopeDefault,
    LinkPreviewOptions,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    Defaults,
    TypeHandler,
)
from telegram.warnings import PTBUserWarning

from advisor.render import label
from bot import commands, inline, lab, measured, wizard
from bot.context import AdvisorApplication, Context, is_anonymous_admin, language_for, written_in
from bot.hub import HubService
from bot.inbox import Inbox
from bot.inline_links import PendingLinks
from bot.lab_store import lab_store
from bot.logs import hashed_id
from bot.metrics import (
    MeteredRateLimiter,
    MeteredRequest,
    Metrics,
    mark_failed,
    update_type,
)
from bot.persistence import SQLitePersistence
from bot.settings import Settings
from bot.user_order import MAX_CONCURRENT_UPDATES, PerUserUpdateProcessor

log = logging.getLogger(__name__)

PRIVATE_COMMANDS = (
    "start",
    "vram",
    "gpus",
    "gpu",
    "fit",
    "history",
    "lang",
    "help",
    "cancel",
    "about",
    "forget",
    "lab",
)
GROUP_COMMANDS = ("vram", "start", "gpu", "fit", "history", "lang", "help", "cancel", "lab")


async def remember(update: Update, context: Context) -> None:
    """Runs before every handler (group -1): records who asked where, settles the language,
    follows a group that became a supergroup, and drops updates from channels and bots."""
    user, chat, msg = update.effective_user, update.effective_chat, update.effective_message
    anonymous = is_anonymous_admin(update)
    if chat is not None and chat.type == "channel" or user is not None and user.is_bot:
        if not anonymous:
            raise ApplicationHandlerStop
        user = None  # GroupAnonymousBot is nobody's profile
    elif user is None and not anonymous:
        # no sender: a post on behalf of another chat (a linked channel writing in its
        # discussion group), a poll's update; nobody to answer, nothing went wrong
        log.debug("update %s has no sender; ignored", update.update_id)
        raise ApplicationHandlerStop
    if (
        msg is not None
        and chat is not None
        and (msg.migrate_to_chat_id or msg.migrate_from_chat_id)
    ):
        await _follow_migration(
            context, msg.migrate_from_chat_id or chat.id, msg.migrate_to_chat_id or chat.id
        )
        raise ApplicationHandlerStop
    await context.repo.seen(
        user.id if user else None,
        user.first_name if user else None,
        user.language_code if user else None,
        chat.id if chat else None,
        chat.type if chat else None,
        chat.title if chat else None,
    )
    await settle_language(update, context)


async def _follow_migration(context: Context, old_chat_id: int, new_chat_id: int) -> None:
    """Telegram announces a group's upgrade twice (migrate_to in the old group, migrate_from
    in the new supergroup), in either order; the second announcement finds nothing to move."""
    await context.repo.migrate_chat(old_chat_id, new_chat_id)
    if old_chat_id in context.application.chat_data:
        context.application.migrate_chat_data(old_chat_id=old_chat_id, new_chat_id=new_chat_id)


async def settle_language(update: Update, context: Context) -> None:
    user, chat = update.effective_user, update.effective_chat
    group_id = chat.id if chat is not None and chat.type != "private" else None
    user_lang, chat_lang = await context.repo.language_choices(user.id if user else None, group_id)
    query, inline = update.callback_query, update.inline_query
    if query is not None:  # the language of the message the button is under
        msg = query.message
        written = written_in(getattr(msg, "text", None), ours=True)
    elif inline is not None:
        written = written_in(inline.query)
    else:
        # a question's own language; a reply to one of our prompts (a wizard step, a /lab
        # machine typed in a group) goes on in the language of the conversation it answers
        msg = update.effective_message
        replying = msg is not None and msg.reply_to_message is not None
        written = written_in(msg.text if msg is not None and not replying else None)
    context.lang = language_for(
        user_lang,
        chat_lang,
        user.language_code if user else None,
        context.settings.default_language,
        written,
    )


async def on_error(update: object, context: Context) -> None:
    """Log with the update; tell the user, briefly and in their language. Never a traceback
    in a chat."""
    err = context.error
    mark_failed()
    if isinstance(err, Forbidden):
        log.info("forbidden (user blocked the bot?): %s", err)
        return
    if isinstance(err, (NetworkError, TimedOut, RetryAfter)) and not isinstance(update, Update):
        log.warning("network trouble while polling: %s", err)
        return
    if isinstance(err, TimedOut):
        # The answer may yet arrive (Telegram acts on requests it answers late); an apology
        # now could follow it, and would meet the same slow Bot API (bot.delivery).
        log.warning("a send timed out; no apology sent: %s", err)
        return
    if isinstance(update, Update) and _gone(err):
        # The message under a button was deleted, or an inline query or a press was
        # answered past Telegram's window: nothing went wrong that an apology would mend.
        log.info("update %s: %s; nothing to answer", update.update_id, err)
        if update.callback_query is not None:
            with contextlib.suppress(TelegramError):
                await settle_language(update, context)
                await update.callback_query.answer(
                    label(context.lang, "alert.expired"), show_alert=True
                )
        return
    # user content only at DEBUG; at ERROR which update, of what kind, from whom (hashed)
    if isinstance(update, Update):
        user, chat = update.effective_user, update.effective_chat
        log.error(
            "handler failed for update %s (%s, user %s, chat %s)",
            update.update_id,
            update_type(update),
            hashed_id(user.id if user else None),
            hashed_id(chat.id if chat else None),
            exc_info=err,
        )
        if log.isEnabledFor(logging.DEBUG):
            log.debug("the update: %s", json.dumps(update.to_dict(), ensure_ascii=False))
    else:
        log.error("handler failed outside an update", exc_info=err)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    try:
        await settle_language(update, context)  # the error handler gets a fresh context
        if update.callback_query is not None:
            with contextlib.suppress(TelegramError):  # the handler may have answered it already
                await update.callback_query.answer()
        msg = update.effective_message
        body = label(context.lang, "alert.sorry")
        if msg is not None and update.callback_query is None:
            await msg.reply_text(html.escape(body))
        else:
            await context.bot.send_message(update.effective_chat.id, html.escape(body))
    except Exception as exc:  # noqa: BLE001 - the apology itself failed; the log has the cause
        log.warning("could not send the apology: %s", exc)


# Telegram's answers when what a handler answers no longer exists (core.telegram.org/bots/api
# error texts, as the stand-in gives them): a deleted message, a press or inline query past
# its answer window.
_GONE = (
    "message to edit not found",
    "message can't be edited",
    "message_id_invalid",
    "message to delete not found",
    "query is too old",
)


def _gone(err: BaseException | None) -> bool:
    return isinstance(err, BadRequest) and any(g in err.message.lower() for g in _GONE)


async def purge_old_history(context: Context) -> None:
    days = context.settings.history_retention_days
    removed = await context.repo.purge_history(days)
    links = await lab_store(context.repo).purge_links(days)
    await context.repo.purge_handled()
    log.info(
        "retention: removed %d questions and %d inline links older than %d days",
        removed,
        links,
        days,
    )


async def post_init(app: Application) -> None:
    """Command menus for private and group chats, in Chinese and English (Telegram picks
    by the user's language), and the daily retention job. PTB runs this only from
    run_polling; `bot.runner.start` calls it itself."""
    for lang_code in ("", "zh", "en"):
        lang = "zh" if lang_code == "zh" else "en"
        private = [BotCommand(c, label(lang, f"cmd.{c}")) for c in PRIVATE_COMMANDS]
        group = [BotCommand(c, label(lang, f"cmd.{c}")) for c in GROUP_COMMANDS]
        await app.bot.set_my_commands(
            private, scope=BotCommandScopeAllPrivateChats(), language_code=lang_code or None
        )
        await app.bot.set_my_commands(
            group, scope=BotCommandScopeAllGroupChats(), language_code=lang_code or None
        )
        await app.bot.set_my_commands(
            private, scope=BotCommandScopeDefault(), language_code=lang_code or None
        )
    # build_application makes an AdvisorApplication with its inbox
    assert isinstance(app, AdvisorApplication) and app.inbox is not None
    await app.inbox.replay(app)
    if app.job_queue is not None:
        app.job_queue.run_repeating(
            purge_old_history,
            interval=dt.timedelta(days=1),
            first=dt.timedelta(seconds=30),
            name="retention",
        )


def build_application(builder: ApplicationBuilder, settings: Settings) -> AdvisorApplication:
    """Production passes `ApplicationBuilder().token(...)`; tests add `.base_url(stand-in)`."""
    if settings.telegram_api_base_url:
        builder = builder.base_url(settings.telegram_api_base_url)
    inbox = Inbox()
    metrics = Metrics()
    processor = PerUserUpdateProcessor(MAX_CONCURRENT_UPDATES)
    processor.on_done = inbox.done
    processor.metrics = metrics

    async def received(payload: bytes) -> None:
        if b'"update_id"' not in payload:  # an empty long poll writes nothing
            return await inbox.received(payload)
        with metrics.db_write.labels("inbox").time():
            await inbox.received(payload)

    app = (
        builder.request(MeteredRequest(metrics))
        .get_updates_request(MeteredRequest(metrics, connection_pool_size=1, on_response=received))
        .application_class(AdvisorApplication, kwargs={"settings": settings})
        .context_types(_context_types())
        .defaults(
            Defaults(
                parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True)
            )
        )
        .persistence(SQLitePersistence(settings.database_path))
        .rate_limiter(
            MeteredRateLimiter(
                metrics,
                overall_max_rate=settings.rate_limit_overall_per_s,
                overall_time_period=1,
                group_max_rate=settings.rate_limit_group_per_min,
                group_time_period=60,
                max_retries=3,
            )
        )
        .concurrent_updates(processor)
        .post_init(post_init)
        .post_shutdown(_close_storage)
        .build()
    )
    assert isinstance(app, AdvisorApplication)
    inbox.app = app
    app.inbox = inbox
    app.metrics = metrics
    _add_handlers(app)
    return app


def _add_handlers(app: AdvisorApplication) -> None:
    """Where each update goes, in order: every update remembered first, then the first
    handler that matches."""
    app.add_handler(TypeHandler(Update, remember), group=-1)
    # One group: the first handler that matches wins, so a member inside the wizard gets
    # the wizard and everyone else the commands and fallbacks, never both.
    # lab mode and inline mode: /start with a deep-link payload, inline queries,
    # /lab and replies to its prompt, before the wizard (whose /start ignores a payload)
    app.add_handlers(inline.handlers())
    app.add_handlers(lab.handlers())
    # "I ran it" reports: replies to the 📏 prompt and typed reports, before the wizard and
    # the follow-ups that would read "实测 21.5G" as a change to the question
    app.add_handlers(measured.handlers())
    with warnings.catch_warnings():
        # per_message=False with CallbackQueryHandlers is deliberate: one wizard per member
        # and chat, its buttons routed by their payload (see bot.callbacks).
        warnings.filterwarnings("ignore", category=PTBUserWarning)
        app.add_handler(wizard.conversation())
    app.add_handlers(commands.handlers())
    app.add_error_handler(on_error)


def _context_types():  # noqa: ANN202
    from telegram.ext import ContextTypes

    return ContextTypes(context=Context, bot_data=dict, chat_data=dict, user_data=dict)


async def _close_storage(app: Application) -> None:
    assert isinstance(app, AdvisorApplication)  # build_application makes no other
    if app.inbox is not None:
        await app.inbox.drain()  # the last handled updates' state and inbox deletes
    links = app.made(PendingLinks)
    if links is not None:
        await links.flush()  # inline questions typed in the last seconds (bot.inline_links)
    hub = app.made(HubService)
    if hub is not None:
        await hub.client.aclose()
    if isinstance(app.persistence, SQLitePersistence):
        await app.persistence.close()
