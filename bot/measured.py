""" "I ran it": a member reports what a job the bot answered used on a real card, and the
report is stored with the question it answers (bot.measurement_store) and compared with the
engine's figure in one line (advisor.measured).

Three ways in, one path after:
- the 📏 button under an answer (callback `r|<hid>`) sends a ForceReply addressed to the
  member (selective, with a mention: in a group with privacy mode, the reply to the bot's
  message reaches the bot); the reply is the report. chat_data remembers which answer each
  prompt was for.
- in a private chat, a typed message that reads as a report ("实测 21.5G", "OOM on 2x 3090")
  reports on the member's latest answer there;
- in a group, such a message sent as a reply to one of the member's answers.
Nothing is stored for a report that cannot be read, on an answer older than the history's
retention, or on someone else's answer: the member is told why, in their language.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from markupsafe import Markup
from telegram import ForceReply, Message, Update
from telegram.ext import BaseHandler, CallbackQueryHandler, MessageHandler, filters

from advisor import catalog
from advisor.measured import Judgement, ReportSummary, judge_report, summarize
from advisor.parse.measured import MeasuredReport, may_be_report, parse_report
from advisor.recommend import Recommendation
from bot import hub
from bot.answer import compute
from bot.callbacks import unpack
from bot.context import Context
from bot.delivery import answer_soon
from bot.followup import history_id_of
from bot.history_store import HistoryEntry
from bot.measurement_store import Measurement, measurement_store
from bot.replies import send, t, text
from bot.reply_filters import ReplyToBot, reply_to_prompt
from bot.wizard import refuse_not_owner

PROMPT_MARK = "📏"  # the prompt starts with it: a reply to such a message is a report
PROMPTS_KEY = "report_prompts"  # chat_data: prompt message id -> [history id, user id]
MAX_OPEN_PROMPTS = 50


def handlers() -> list[BaseHandler]:
    return [
        CallbackQueryHandler(on_ran_it, pattern=r"^r\|"),
        MessageHandler(
            filters.REPLY & filters.TEXT & ~filters.COMMAND & reply_to_prompt(PROMPT_MARK),
            on_prompt_reply,
        ),
        MessageHandler(
            filters.ChatType.PRIVATE & filters.TEXT & ~filters.COMMAND & _TypedReport(),
            on_typed_report,
        ),
        MessageHandler(
            filters.ChatType.GROUPS
            & filters.REPLY
            & filters.TEXT
            & ~filters.COMMAND
            & ReplyToBot(lambda replied: history_id_of(replied) is not None)
            & _TypedReport(),
            on_reply_to_answer,
        ),
    ]


class _TypedReport(filters.MessageFilter):
    """A message that reads as a report and nothing else (MeasuredReport.is_typed_report)."""

    def filter(self, message: Message) -> bool:
        body = message.text or ""
        return may_be_report(body) and parse_report(body).is_typed_report


# --- the button and its prompt -------------------------------------------------------------


async def on_ran_it(update: Update, context: Context) -> None:
    query, user, chat = update.callback_query, update.effective_user, update.effective_chat
    assert query is not None and user is not None and chat is not None
    cb = unpack(query.data)
    entry = await context.repo.history_entry(cb.id) if cb is not None and not cb.args else None
    if entry is None or entry.canonical is None or entry.chat_id != chat.id:
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return
    if entry.user_id != user.id:
        await refuse_not_owner(update, context, entry.user_id)
        return
    if _too_old(entry, context):
        days = context.settings.history_retention_days
        await query.answer(t(context, "measured.too_old", days=days)[:200], show_alert=True)
        return
    await answer_soon(query)
    card = (entry.summary or {}).get("gpu")
    # a mention makes the selective ForceReply open for this member only
    mention = Markup('<a href="tg://user?id={}">{}</a>').format(user.id, user.first_name)
    body = (
        PROMPT_MARK
        + " "
        + text(
            context,
            "measured_prompt",
            mention=mention,
            card=catalog.gpus()[card].name if card in catalog.gpus() else None,
            count=(entry.summary or {}).get("count") or 1,
        )
    )
    where = query.message
    thread = (
        where.message_thread_id if isinstance(where, Message) and where.is_topic_message else None
    )
    sent = await context.bot.send_message(
        chat.id,
        body,
        message_thread_id=thread,
        reply_markup=ForceReply(selective=True, input_field_placeholder="21.3G nvidia-smi"),
    )
    if context.chat_data is not None:
        # chat_data is persisted as JSON: string keys; only the last prompts are kept
        prompts = context.chat_data.setdefault(PROMPTS_KEY, {})
        prompts[str(sent.message_id)] = [entry.id, user.id]
        for old in list(prompts)[:-MAX_OPEN_PROMPTS]:
            del prompts[old]


async def on_prompt_reply(update: Update, context: Context) -> None:
    msg, user = update.effective_message, update.effective_user
    assert msg is not None and msg.text is not None and user is not None
    replied = msg.reply_to_message
    prompts = context.chat_data.get(PROMPTS_KEY, {}) if context.chat_data is not None else {}
    opened = prompts.get(str(replied.message_id)) if replied is not None else None
    if opened is None:
        await _refuse(update, context, "prompt_gone")
        return
    hid, owner = opened
    if owner != user.id:
        await _refuse(update, context, "not_yours", name=await _first_name(context, owner))
        return
    if await report(update, context, hid, msg.text):
        prompts.pop(str(replied.message_id), None)  # type: ignore[union-attr]


async def on_typed_report(update: Update, context: Context) -> None:
    """Private chat: a report on the member's latest answer here."""
    msg, user, chat = update.effective_message, update.effective_user, update.effective_chat
    assert msg is not None and msg.text is not None and user is not None and chat is not None
    latest = await context.repo.recent_history(user.id, chat.id, limit=1)
    await report(update, context, latest[0].id if latest else None, msg.text)


async def on_reply_to_answer(update: Update, context: Context) -> None:
    """Group: a report sent as a reply to one of our answers reports on that answer."""
    msg = update.effective_message
    assert msg is not None and msg.text is not None
    await report(update, context, history_id_of(msg.reply_to_message), msg.text)


# --- one report ------------------------------------------------------------------------------


async def report(update: Update, context: Context, hid: int | None, body: str) -> bool:
    """Judge and store a report on answer `hid`, and say how it compares; or say why
    nothing was stored. Returns whether it was stored."""
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    entry = await context.repo.history_entry(hid) if hid is not None else None
    if entry is None or entry.canonical is None or entry.chat_id != chat.id:
        await _refuse(update, context, "no_answer")
        return False
    if entry.user_id != user.id:
        await _refuse(update, context, "not_yours", name=await _first_name(context, entry.user_id))
        return False
    if _too_old(entry, context):
        await _refuse(update, context, "too_old", days=context.settings.history_retention_days)
        return False
    read = parse_report(body)
    if not read.ok:
        await _refuse(update, context, read.error or "no_figure", detail=read.detail)
        return False
    judged = await _judge(context, entry, read)
    if isinstance(judged, str):
        await _refuse(update, context, judged)
        return False
    row, judgement = judged
    await measurement_store(context.repo).add(
        row, user_id=user.id, chat_id=chat.id, raw_text=body, update_id=update.update_id
    )
    await send(
        update,
        context,
        "measured_done",
        j=judgement,
        card=catalog.gpus()[row.gpu_id].name,
        count=row.gpu_count,
        where=read.where,
    )
    return True


async def _judge(
    context: Context, entry: HistoryEntry, read: MeasuredReport
) -> tuple[Measurement, Judgement] | str:
    """The engine's estimate for the answer's job on the card the report names (else the
    answer's card and count), judged against the report; or an error code."""
    assert entry.canonical is not None
    parsed, _ = await hub.reparse(context, entry.canonical)
    if parsed.question_kind == "capability" and parsed.error is None:
        return "no_estimate"  # what a card runs: no one job's memory to measure against
    if not parsed.ok:
        return "changed"
    rec = compute(parsed, context)
    head = rec.headline
    if head is None or rec.setup is None or rec.setup.estimate is None:
        return "no_estimate"
    card = read.gpu_id or head.gpu_id
    count = read.gpu_count or (head.count if card == head.gpu_id else 1)
    if (card, count) != (head.gpu_id, head.count):
        changed = parsed.model_copy(
            update={
                "gpu_id": card,
                "gpu_count": count,
                "vram_gib": None,
                "laptops": None,
                "ask_count": False,
                "other_cards": [],
            }
        )
        rec = compute(changed, context)
    return _measured(rec, entry, read, card, count)


def _measured(
    rec: Recommendation, entry: HistoryEntry, read: MeasuredReport, card: str, count: int
) -> tuple[Measurement, Judgement] | str:
    setup = rec.setup
    if setup is None or setup.estimate is None:
        return "no_estimate"
    est = setup.estimate
    judgement = judge_report(est, read, catalog.gpus()[card])
    assert entry.canonical is not None
    row = Measurement(
        history_id=entry.id,
        canonical=entry.canonical,
        workload=setup.workload.model_dump(mode="json", exclude_none=True),
        runtime=est.runtime.value if est.runtime else None,
        assumed=[(a.field, str(a.value)) for a in setup.assumed],
        recipe=rec.recipe or rec.budget_fix,
        gpu_id=card,
        gpu_count=count,
        kind="oom" if read.oom else "figure",
        measured_bytes=judgement.measured_bytes,
        limit_bytes=judgement.limit_bytes,
        measured_what=read.where,
        unit_ambiguous=read.unit_ambiguous,
        view=judgement.view,
        estimate_bytes=judgement.estimate_bytes,
        low_bytes=judgement.low_bytes,
        high_bytes=judgement.high_bytes,
        outcome=judgement.outcome,
        catalog_version=catalog.catalog_version(),
    )
    return row, judgement


def _too_old(entry: HistoryEntry, context: Context) -> bool:
    """Older than the history's retention (HISTORY_RETENTION_DAYS): the daily purge may
    not have removed it yet, but it is no longer the member's question to report on."""
    created = datetime.fromisoformat(entry.created_at)
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return datetime.now(UTC) - created > timedelta(days=context.settings.history_retention_days)


async def _first_name(context: Context, user_id: int) -> str:
    found = await context.repo.user(user_id)
    return (found or {}).get("first_name") or "?"


async def _refuse(update: Update, context: Context, error: str, **detail: Any) -> None:
    detail.setdefault("detail", "")
    detail.setdefault("name", "")
    detail.setdefault("days", context.settings.history_retention_days)
    await send(update, context, "measured_error", error=error, **detail)


async def report_summary(context: Context) -> ReportSummary:
    """The engine on every stored report (/stats), from the figures stored with each."""
    stored = await measurement_store(context.repo).all()
    return summarize(
        [
            Judgement(
                outcome=m.outcome,
                view=m.view,
                estimate_bytes=m.estimate_bytes,
                low_bytes=m.low_bytes,
                high_bytes=m.high_bytes,
                measured_bytes=m.measured_bytes,
                limit_bytes=m.limit_bytes,
                error=m.estimate_bytes / m.measured_bytes - 1 if m.measured_bytes else None,
            )
            for m in stored
        ]
    )
