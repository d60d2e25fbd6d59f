"""The answer to a question: advisor → template → reply, stored in history, with buttons to
change precision, budget or card, read the details, or start over."""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from telegram import Message, Update
from telegram.constants import ChatType, MessageLimit

from advisor import catalog
from advisor.kinds import answer_kind, answered_as
from advisor.memo import Memo, prices_key
from advisor.parse import ParsedQuery, canonical_query, parse_budget
from advisor.recommend import Recommendation, recommend_query, summary
from advisor.recommend.pricing import ALL_REGIONS
from advisor.render import render
from bot import hub, lab
from bot.callbacks import pack
from bot.chart import Chart, draw
from bot.choices import answer_choices
from bot.context import Context
from bot.replies import Keyboard, deliver, send, t, visible_len


def currency_for(context: Context) -> str:
    """Prices in yuan for Chinese replies, dollars for English, unless a budget says otherwise."""
    return "CNY" if context.lang == "zh" else "USD"


def compute(parsed: ParsedQuery, context: Context, region: str | None = None) -> Recommendation:
    return recommend_query(
        parsed,
        default_currency=currency_for(context),
        prices_file=context.settings.prices_file,
        region=region,
    )


# Rendered answers by question (advisor.memo): the reply's text is a pure function of the
# template, the language, the currency, the price list, the region and the question (every
# field of it: assumptions and skipped words are shown). Keyboards and history ids are not
# part of it and are built per reply. Each entry keeps the history summary, not the whole
# recommendation (~100 kB; advisor.recommend bounds how many of those stay).
_ANSWERS: Memo[tuple[dict, str]] = Memo("answer", 512)


def answer_text(
    parsed: ParsedQuery,
    context: Context,
    template: str = "answer",
    canonical: str | None = None,
    region: str | None = None,
    hub_answer: object = None,
    compact: bool = False,
    view: str = "full",
) -> tuple[dict, str]:
    """The history summary (advisor.recommend.summary) and the rendered reply for a parsed
    question. A model read from the Hub (`hub_answer`, bot.hub) is rendered each time: its
    source line carries the reading's time, and such questions are rare. `compact`: the
    shortened answer (no card table, no ℹ️ notes) for when the whole reply would not fit one
    message. `view`: which part of the answer (`VIEWS`; "short" is the first reply)."""
    canonical = canonical_query(parsed) if canonical is None else canonical
    key = (
        catalog.catalog_version(),
        prices_key(context.settings.prices_file),
        parsed.model_dump_json(),
        context.lang,
        currency_for(context),
        region,
        template,
        canonical,
        compact,
        view,
    )

    def make() -> tuple[dict, str]:
        rec = compute(parsed, context, region)
        body = render(
            template,
            context.lang,
            rec=rec,
            parsed=parsed,
            canonical=canonical,
            hub=hub_answer,
            compact=compact,
            view=view,
        )
        return summary(rec), body

    return make() if hub_answer is not None else _ANSWERS.get(key, make)


def fits_one_message(body: str) -> bool:
    """Whether a reply goes out as one Telegram message. In a group, an answer that does not
    (the lab's machines before a long rental answer) is shortened rather than cut in two: a
    second message reads as a second answer, and other replies land between the halves. In
    a private chat the whole answer goes out in two messages (the shortened one would send
    the reader to a private chat)."""
    return visible_len(body) <= MessageLimit.MAX_TEXT_LENGTH


# The parts of an answer a button opens in place (callback `a|<hid>|<letter>`), by the
# answer template's `view` (templates/*/answer.j2): the first reply is "short".
SECTIONS = {"b": "breakdown", "o": "picks", "s": "assumptions", "t": "pitfalls"}
CHART = "i"  # the memory breakdown as a picture (bot.chart), sent as a photo


def answer_keyboard(
    context: Context, hid: int, all_platforms: bool = False, current: str = "r"
) -> Keyboard:
    """Under an answer: the parts of it (chart, breakdown, all picks, assumptions, pitfalls,
    details), then the changes (precision, budget, card), the platforms and a new question.
    The part shown now (`current`) gives its place to the way back to the first reply. The
    platforms button flips between the reader's usual platforms first (China-payable for
    Chinese) and every platform ranked by price alone."""
    platforms = (
        (t(context, "button.usual_platforms"), pack("a", hid, "r"))
        if all_platforms
        else (t(context, "button.all_platforms"), pack("a", hid, "w"))
    )

    def part(view: str, key: str) -> tuple[str, str]:
        if view == current:
            return (t(context, "button.to_answer"), pack("a", hid, "r"))
        return (t(context, key), pack("a", hid, view))

    return [
        [part(CHART, "button.chart"), part("b", "button.breakdown"), part("o", "button.picks")],
        [
            part("s", "button.assumptions"),
            part("t", "button.pitfalls"),
            part("d", "button.details"),
        ],
        [
            (t(context, "button.precision"), pack("a", hid, "p")),
            (t(context, "button.budget"), pack("a", hid, "m")),
            (t(context, "button.card"), pack("a", hid, "g")),
        ],
        [platforms, (t(context, "button.new"), pack("w", 0, "n"))],
        # "I ran it": report what the job used on a real card (bot.measured)
        [(t(context, "measured.button"), pack("r", hid))],
    ]


def view_keyboard(context: Context, hid: int, view: str) -> Keyboard:
    """The sub-menu under an answer: choices for precision (p), card (g) or budget (m)."""
    what = {"p": "f", "g": "g", "m": "m"}[view]
    choices = answer_choices(what)
    if what == "g":
        names = [
            catalog.gpus()[g].name.replace("GeForce ", "").replace("NVIDIA ", "") for g in choices
        ]
    elif what == "f":
        names = [c.upper() for c in choices]
    else:
        names = list(choices)
    buttons = [(name, pack("c", hid, what, i)) for i, name in enumerate(names)]
    if what == "m":
        buttons.append((t(context, "button.any_budget"), pack("c", hid, "m", "x")))
    rows: Keyboard = [buttons[i : i + 3] for i in range(0, len(buttons), 3)]
    rows.append([(t(context, "button.to_answer"), pack("a", hid, "r"))])
    return rows


def apply_change(parsed: ParsedQuery, what: str, choice: str) -> ParsedQuery:
    """The same question with one thing changed by an answer button."""
    assert parsed.workload is not None
    if what == "f":
        fmt = catalog.find_format(answer_choices("f")[int(choice)])
        assert fmt is not None, "wizard.toml names a format the catalog lacks"
        w = parsed.workload.model_copy(update={"weights_format": fmt.id})
        return parsed.model_copy(update={"workload": w, "assumed": [], "ignored": []})
    if what == "g":
        # another card: no longer the laptops asked about (canonical would write their count)
        card = answer_choices("g")[int(choice)]
        return parsed.model_copy(
            update={"gpu_id": card, "laptops": None, "assumed": [], "ignored": []}
        )
    if choice == "x":
        return parsed.model_copy(update={"budget": None, "assumed": [], "ignored": []})
    budget = parse_budget(answer_choices("m")[int(choice)])
    return parsed.model_copy(update={"budget": budget, "assumed": [], "ignored": []})


async def reply_with_answer(
    update: Update,
    context: Context,
    raw_text: str,
    parsed: ParsedQuery,
    *,
    edit: bool = False,
    hub: object = None,  # hublookup.resolve.HubAnswer: the model came from the Hub (bot.hub)
    in_place: Message | None = None,  # edit this message ("looking up …") into the answer
) -> int | None:
    """Answer a parsed question (or explain the parse error); returns the history id. A
    question of a kind with its own answer (advisor/kinds: what a card can run, a purchase,
    A vs B, small talk) gets that answer, rendered with its kind's template."""
    if answered_as(parsed) != "fit":
        await reply_with_kind(
            update, context, parsed, edit=edit, in_place=in_place, raw_text=raw_text
        )
        return None
    if not parsed.ok:
        await send(
            update,
            context,
            "error",
            edit=edit,
            in_place=in_place,
            error=parsed.error,
            parsed=parsed,
        )
        return None
    canonical = canonical_query(parsed)
    brief, body = await answer_as_sent(
        update, context, parsed, "answer", canonical, hub_answer=hub, view="short"
    )
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None and parsed.workload is not None
    # The reply goes out while its history row is written: its buttons carry the row's id,
    # reserved now (Repository.reserve_history_id). The update ends once the row is
    # committed, so the inbox lets it go only then and a crash before replays it.
    hid = await context.repo.reserve_history_id()
    stored = asyncio.ensure_future(
        context.repo.add_history(
            user_id=user.id,
            chat_id=chat.id,
            raw_text=raw_text,
            canonical=canonical,
            workload=parsed.workload.model_dump(mode="json", exclude_none=True),
            summary=brief,
            catalog_version=catalog.catalog_version(),
            update_id=update.update_id,
            entry_id=hid,
        )
    )
    try:
        await deliver(
            update, context, body, answer_keyboard(context, hid), edit=edit, in_place=in_place
        )
    finally:
        await stored
    return hid


def kind_text(parsed: ParsedQuery, context: Context) -> str:
    """The reply to a question answered by its kind's module (advisor.kinds)."""
    result = answer_kind(parsed, currency_for(context))
    return render(
        parsed.question_kind,
        context.lang,
        result=result,
        parsed=parsed,
        unknown_card=parsed.unknown_card,
    )


async def reply_with_kind(
    update: Update,
    context: Context,
    parsed: ParsedQuery,
    *,
    edit: bool = False,
    in_place: Message | None = None,
    raw_text: str = "",
) -> None:
    await deliver(update, context, kind_text(parsed, context), edit=edit, in_place=in_place)
    user, chat = update.effective_user, update.effective_chat
    # A serving or training-time question has a workload: stored as a fit answer's is, so a
    # follow-up ("用 3090 呢") changes this question, not the one before it; a card's
    # capability is stored by its card ("那换成4090呢" asks what the 4090 runs).
    stored = parsed.question_kind in _STORED_KINDS and parsed.ok
    stored |= parsed.question_kind == "capability" and parsed.error is None
    if stored and user and chat:
        await context.repo.add_history(
            user_id=user.id,
            chat_id=chat.id,
            raw_text=raw_text,
            canonical=canonical_query(parsed) or None,
            workload=parsed.workload.model_dump(mode="json", exclude_none=True)
            if parsed.workload is not None
            else None,
            summary=None,
            catalog_version=catalog.catalog_version(),
            update_id=update.update_id,
        )


# Kinds whose answer is about one workload (advisor/kinds): kept in the history like a fit.
_STORED_KINDS = ("serve", "train_time")


async def answer_as_sent(
    update: Update,
    context: Context,
    parsed: ParsedQuery,
    template: str,
    canonical: str,
    region: str | None = None,
    hub_answer: object = None,
    view: str = "short",
) -> tuple[dict, str]:
    """`answer_text` as the chat sees it. The first reply (view "short") starts with the
    chat's own machines (lab mode: the best one in a line; the rentals below as the
    alternative); the whole list of them comes with the full answer. In a group a view is
    the compact one when it would not fit one message (`fits_one_message`)."""
    brief, body = answer_text(parsed, context, template, canonical, region, hub_answer, view=view)
    if template != "answer" or view not in ("short", "full", "picks"):
        return brief, body
    own = await lab.owned_section(update, context, parsed, short=view == "short")
    chat = update.effective_chat
    if chat is not None and chat.type != ChatType.PRIVATE and not fits_one_message(own + body):
        _, body = answer_text(
            parsed, context, template, canonical, region, hub_answer, True, view=view
        )
    return brief, own + body


# Pictures by answer (bot.chart): the chart is a function of the same things as the answer's
# text, drawn once per answer and language however often its button is pressed.
_CHARTS: OrderedDict[tuple, Chart | None] = OrderedDict()
CHARTS_KEPT = 64


async def answer_chart(
    parsed: ParsedQuery, context: Context, canonical: str, hub_answer: object = None
) -> Chart | None:
    """The answer's breakdown as a picture, drawn in a worker thread (matplotlib takes
    ~0.1-0.3 s of CPU, which the event loop must not wait for) and kept per answer."""
    key = (
        catalog.catalog_version(),
        prices_key(context.settings.prices_file),
        canonical,
        context.lang,
        currency_for(context),
    )
    if hub_answer is None and key in _CHARTS:
        _CHARTS.move_to_end(key)
        return _CHARTS[key]
    rec = compute(parsed, context)
    chart = await asyncio.to_thread(draw, rec, context.lang)
    if hub_answer is None:  # a Hub model's answer is drawn afresh, as its text is
        _CHARTS[key] = chart
        if len(_CHARTS) > CHARTS_KEPT:
            _CHARTS.popitem(last=False)
    return chart


async def show_chart(update: Update, context: Context, canonical: str) -> None:
    """The 📊 button: the picture as a photo replying to the answer (the answer stays as it
    is), or a short alert when the task has no per-card figure."""
    query = update.callback_query
    assert query is not None
    parsed, hub_answer = await hub.reparse(context, canonical)
    chart = await answer_chart(parsed, context, canonical, hub_answer) if parsed.ok else None
    if chart is None:
        await query.answer(t(context, "chart.none"), show_alert=True)
        return
    await query.answer()
    msg = query.message
    caption = t(context, "chart.caption")
    if isinstance(msg, Message):
        await msg.reply_photo(chart.png, caption=caption)
    elif update.effective_chat is not None:
        await context.bot.send_photo(update.effective_chat.id, chart.png, caption=caption)


async def show_view(update: Update, context: Context, hid: int, view: str, canonical: str) -> None:
    """Edit an answer in place: back to the answer (r), the same with every platform ranked
    by price (w), the details (d) or a sub-menu."""
    parsed, hub_answer = await hub.reparse(context, canonical)
    if not parsed.ok:  # the catalog changed since: say so rather than guess
        await send(update, context, "error", edit=True, error=parsed.error, parsed=parsed)
        return
    part = "short"
    if view == "d":
        template, keyboard = "details", answer_keyboard(context, hid, current="d")
    elif view in ("r", "w"):
        template, keyboard = "answer", answer_keyboard(context, hid, all_platforms=view == "w")
        part = "picks" if view == "w" else "short"  # every platform: the picks re-ranked
    elif view in SECTIONS:
        template, keyboard = "answer", answer_keyboard(context, hid, current=view)
        part = SECTIONS[view]
    else:
        template, keyboard = "answer", view_keyboard(context, hid, view)
    region = ALL_REGIONS if view == "w" else None
    _, body = await answer_as_sent(
        update, context, parsed, template, canonical, region, hub_answer, view=part
    )
    await deliver(update, context, body, keyboard, edit=True)
