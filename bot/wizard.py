"""The guided conversation: task → model → the knobs that matter for that task → budget →
answer. The steps of each task are data (`wizard.toml`); every step has buttons, accepts
free text through the query parser, and can go back or be cancelled.

One conversation per member and chat (PTB's (chat, user) key). The draft
(`bot.wizard_draft`) lives in `user_data["wizard"][chat_id]`, persisted after every update.
Buttons carry their owner and step (`bot.callbacks`), so a button pressed after a restart,
or one state behind, still lands on the right step. In groups, where privacy mode hides plain text, typing goes
through a ForceReply question addressed to the member.
"""

from __future__ import annotations

import contextlib
import html
import re

from telegram import ForceReply, Message, Update
from telegram.error import BadRequest
from telegram.ext import (
    CallbackQueryHandler,
    CommandHandler,
    ConversationHandler,
    MessageHandler,
    filters,
)

from advisor.kinds import answered_as
from advisor.parse import ParsedQuery, parse_query
from advisor.parse.scan import ParseError
from bot import hub, hub_questions, lab
from bot.answer import reply_with_answer
from bot.callbacks import Callback, pack, unpack
from bot.choices import wizard_spec
from bot.context import Context
from bot.delivery import answer_soon
from bot.replies import Keyboard, deliver, t, text
from bot.wizard_draft import (
    a_button_number,
    check_now,
    draft_query,
    draft_steps,
    drop_draft,
    find_draft,
    new_draft,
    next_step,
    record_answer,
    stated_default,
    step_for_text,
    typed_token,
)
from hublookup.resolve import find_repo_id

ASKING = 0
END = ConversationHandler.END


def conversation() -> ConversationHandler:
    button: CallbackQueryHandler[Context, object] = CallbackQueryHandler(on_button, pattern=r"^w\|")
    return ConversationHandler(
        entry_points=[
            CommandHandler("start", start),
            CallbackQueryHandler(on_button, pattern=r"^w\|-?\d+\|[nt](\||$)"),
        ],
        states={ASKING: [button, MessageHandler(filters.TEXT & ~filters.COMMAND, on_text)]},
        fallbacks=[CommandHandler("cancel", cancel)],
        name="wizard",
        persistent=True,
        allow_reentry=True,
    )


# --- rendering ---------------------------------------------------------------------------------


def _choice_label(context: Context, choice: dict) -> str:
    key = choice.get("label_key")
    return t(context, key, amount=choice["label"]) if key else choice["label"]


def _keyboard(
    update: Update, context: Context, draft: dict, step: str | None, ours: bool = False
) -> Keyboard:
    """`ours`: the chat has registered machines (/lab), offered at the budget step."""
    uid = draft["owner"]
    group = update.effective_chat is not None and update.effective_chat.type != "private"
    if step is None:
        tasks = list(wizard_spec()["tasks"])
        buttons = [(t(context, f"task.{k}"), pack("w", uid, "t", k)) for k in tasks]
        rows = [buttons[i : i + 2] for i in range(0, len(buttons), 2)]
        last = [(t(context, "button.cancel"), pack("w", uid, "x"))]
        if group:
            last.insert(0, (t(context, "button.type"), pack("w", uid, "k")))
        return [*rows, last]
    spec = wizard_spec()["steps"][step]
    buttons = [
        (_choice_label(context, c), pack("w", uid, "c", step, i))
        for i, c in enumerate(spec["choices"])
    ]
    rows = [buttons[i : i + 3] for i in range(0, len(buttons), 3)]
    if ours and step == "budget":
        rows.insert(0, [(t(context, "lab.ours" if group else "lab.mine"), pack("w", uid, "o"))])
    nav = [(t(context, "button.back"), pack("w", uid, "b"))]
    if spec.get("skip", True):
        nav.append((t(context, "button.skip"), pack("w", uid, "s", step)))
    nav.append((t(context, "button.cancel"), pack("w", uid, "x")))
    rows.append(nav)
    if group:
        rows.append([(t(context, "button.type"), pack("w", uid, "k"))])
    return rows


def _page(
    update: Update, context: Context, draft: dict, step: str | None, error: ParsedQuery | None
) -> str:
    steps = draft_steps(draft)
    picked = [
        (t(context, f"step.{s}"), draft["answers"][s][0])
        for s in draft["path"]
        if s in draft["answers"]
    ]
    user = update.effective_user
    group = update.effective_chat is not None and update.effective_chat.type != "private"
    # The page is the same for everyone at this step but for the asker's name in a group:
    # rendered (and remembered, bot.replies) with a stand-in, the name put in afterwards.
    # The template shows the name only in a group, first on its first line.
    page = text(
        context,
        "wizard",
        step=step,
        task=t(context, f"task.{draft['task']}") if draft["task"] else None,
        step_no=steps.index(step) + 1 if step in steps else 0,
        step_total=len(steps),
        step_label=t(context, f"step.{step}") if step else "",
        default=stated_default(draft, step) if step else None,
        picked=picked,
        error=error.error if error else None,
        parsed=error,
        group=group,
        mention=_MENTION_SLOT if group else "",
    )
    if not group:
        return page
    return page.replace(_MENTION_SLOT, _mention(user.id, user.first_name) if user else "", 1)


# Where the asker's name goes on a group's wizard page: a NUL, which no template and no
# Telegram text holds, so the first one is the slot.
_MENTION_SLOT = "\x00mention\x00"


def _mention(user_id: int, name: str) -> str:
    return f'<a href="tg://user?id={user_id}">{html.escape(name)}</a>'


async def _retire_menu(update: Update, context: Context, draft: dict | None) -> None:
    """A typed answer sits below the old menu: take its buttons away so one menu is live."""
    if draft and draft.get("msg") and update.effective_chat is not None:
        with contextlib.suppress(BadRequest):
            await context.bot.edit_message_reply_markup(
                update.effective_chat.id, draft["msg"], reply_markup=None
            )


async def _show(
    update: Update,
    context: Context,
    draft: dict,
    step: str | None,
    *,
    edit: bool,
    error: ParsedQuery | None = None,
) -> None:
    body = _page(update, context, draft, step, error)
    ours = step == "budget" and await lab.has_machines(update, context)
    kb = _keyboard(update, context, draft, step, ours)
    if not edit:
        await _retire_menu(update, context, draft)
    sent = await deliver(update, context, body, kb, edit=edit)
    if isinstance(sent, Message):
        draft["msg"] = sent.message_id


# --- handlers ----------------------------------------------------------------------------------


async def start(update: Update, context: Context) -> int:
    draft = new_draft(update, context)
    await _show(update, context, draft, None, edit=False)
    return ASKING


async def cancel(update: Update, context: Context) -> int:
    draft = find_draft(update, context)
    drop_draft(update, context)
    await _retire_menu(update, context, draft)
    await deliver(update, context, text(context, "cancelled"))
    return END


async def on_button(update: Update, context: Context) -> int | None:
    query = update.callback_query
    assert query is not None and update.effective_user is not None
    cb = unpack(query.data)
    if cb is None or cb.kind != "w":
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return None
    action = cb.args[0] if cb.args else ""
    if action == "n":  # new question, for whoever pressed it
        await answer_soon(query)
        await _show(update, context, new_draft(update, context), None, edit=False)
        return ASKING
    if cb.id != update.effective_user.id:
        await refuse_not_owner(update, context, cb.id)
        return None
    draft = find_draft(update, context)
    if draft is None and action == "t":
        draft = new_draft(update, context)
    if draft is None:
        await query.answer(t(context, "alert.expired"), show_alert=True)
        return END
    await answer_soon(query)
    return await _apply(update, context, draft, cb)


async def _apply(update: Update, context: Context, draft: dict, cb: Callback) -> int | None:
    action, args = cb.args[0], cb.args[1:]
    spec = wizard_spec()
    if action == "t" and args and args[0] in spec["tasks"]:
        draft.update(task=args[0], answers={}, path=[])
    elif action == "c" and len(args) == 2 and args[0] in draft_steps(draft) and args[1].isdigit():
        choices = spec["steps"][args[0]]["choices"]
        if int(args[1]) >= len(choices):
            return None
        choice = choices[int(args[1])]
        record_answer(draft, args[0], _choice_label(context, choice), choice["token"])
    elif action == "s" and args and args[0] in draft_steps(draft):
        default = stated_default(draft, args[0])
        shown = (
            t(context, "choice.default", value=default) if default else t(context, "choice.skipped")
        )
        record_answer(draft, args[0], shown, spec["steps"][args[0]].get("default", ""))
    elif action == "o":  # "our machines" (lab mode): no rental budget, the machines first
        record_answer(draft, "budget", t(context, "lab.ours_chosen"), "")
        draft["ours"] = True
    elif action == "b":
        if draft["path"]:
            draft["answers"].pop(draft["path"].pop(), None)
        else:
            draft["task"] = None
    elif action == "x":
        drop_draft(update, context)
        await deliver(update, context, text(context, "cancelled"), edit=True)
        return END
    elif action == "k":
        await _ask_to_type(update, context, draft)
        return None
    else:
        return None
    if action == "c" and draft["answers"] and check_now(draft, args[0]):
        parsed = parse_query(draft_query(draft))
        if not parsed.ok:  # e.g. 128k context on an 8k model: say so on this step
            step = args[0]
            draft["answers"].pop(step, None)
            draft["path"].remove(step)
            await _show(update, context, draft, step, edit=True, error=parsed)
            return ASKING
    return await _advance(update, context, draft, edit=True)


async def _advance(update: Update, context: Context, draft: dict, *, edit: bool) -> int | None:
    if draft["task"] is None:
        await _show(update, context, draft, None, edit=edit)
        return ASKING
    step = next_step(draft)
    if step is not None:
        await _show(update, context, draft, step, edit=edit)
        return ASKING
    query = draft_query(draft)
    parsed = parse_query(query)
    if not parsed.ok:  # e.g. an answer typed earlier no longer fits: ask the last step again
        last = draft["path"].pop() if draft["path"] else draft_steps(draft)[0]
        draft["answers"].pop(last, None)
        await _show(update, context, draft, last, edit=edit, error=parsed)
        return ASKING
    drop_draft(update, context)
    context.lab_chosen = bool(draft.get("ours"))
    hub_answer = None
    step, repo_id, token, size = draft.get("hub") or ["", "", None, ""]
    if (draft["answers"].get(step) or ["", ""])[1] == token:  # still the repo typed there
        with_repo = draft_query(draft, (step, token.replace(size, repo_id, 1)))
        if found := await hub.wizard_answer(context, with_repo, repo_id):
            query, (parsed, hub_answer) = with_repo, found
    await reply_with_answer(update, context, query, parsed, edit=edit, hub=hub_answer)
    return END


async def on_text(update: Update, context: Context) -> int | None:
    msg = update.effective_message
    assert msg is not None and msg.text is not None
    draft = find_draft(update, context)
    if draft is None:
        return END
    step = next_step(draft) if draft["task"] else None
    if step is None:
        # Typed at the first question: a whole question in one line ("13b fp16 on 4090").
        parsed = parse_query(msg.text)
        to_hub = hub.wants_hub(msg.text, parsed)  # a repo id, or "olmo2:7b"
        # a line of its own kind ("你好 在吗", "今天天气怎么样", "4090 和 a100 哪个适合") is
        # answered by its kind as a free-text line is, not asked "which model?" again
        if parsed.ok or to_hub or answered_as(parsed) != "fit":
            drop_draft(update, context)
            await _retire_menu(update, context, draft)
            if to_hub:
                await hub_questions.answer(update, context, msg.text, parsed)
            else:
                await reply_with_answer(update, context, msg.text, parsed)
            return END
        await _show(update, context, draft, None, edit=False, error=parsed)
        return ASKING
    if a_button_number(step, msg.text):
        # "8" at the precision step is the position of a button there is not, not "precision
        # 8": the step is asked again, saying so in the user's language
        examples = [_choice_label(context, c) for c in wizard_spec()["steps"][step]["choices"]]
        error = ParseError(
            code="pick_a_button", detail=msg.text.strip()[:12], suggestions=examples[:2]
        )
        await _show(update, context, draft, step, edit=False, error=ParsedQuery(error=error))
        return ASKING
    typed = typed_token(step, msg.text)
    step = step_for_text(draft, step, typed)
    parsed = parse_query(draft_query(draft, (step, typed)))
    if not parsed.ok and wizard_spec()["steps"][step].get("fills") == "model":
        typed, parsed = await _hub_model(update, context, draft, step, typed, parsed)
    if not parsed.ok:
        await _show(update, context, draft, step, edit=False, error=parsed)
        return ASKING
    record_answer(draft, step, msg.text[:40], typed)
    draft["typed"] = True
    return await _advance(update, context, draft, edit=False)


async def _hub_model(
    update: Update, context: Context, draft: dict, step: str, typed: str, parsed: ParsedQuery
) -> tuple[str, ParsedQuery]:
    """A repo id typed at the model step: read from the Hub, then the steps go on
    with its size in the line (draft["hub"] keeps the repo id for the answer)."""
    found = await hub.wizard_model(update, context, typed)
    if found is None:
        return typed, parsed
    if not found[1]:  # a repo the Hub could not read: it said why; the step is asked again
        return typed, ParsedQuery()
    repo_id, size = found
    token = re.sub(re.escape(find_repo_id(typed) or repo_id), size, typed, count=1)
    draft["hub"] = [step, repo_id, token, size]
    return token, parse_query(draft_query(draft, (step, token)))


async def _ask_to_type(update: Update, context: Context, draft: dict) -> None:
    """Groups: plain text does not reach a bot in privacy mode, a reply to its message does."""
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    step = next_step(draft) if draft["task"] else None
    msg = update.effective_message
    thread = msg.message_thread_id if msg is not None and msg.is_topic_message else None
    await context.bot.send_message(
        chat.id,
        text(
            context,
            "type_prompt",
            mention=_mention(user.id, user.first_name),
            step_label=t(context, f"step.{step}") if step else "",
        ),
        reply_markup=ForceReply(
            selective=True, input_field_placeholder=t(context, "choice.placeholder")
        ),
        message_thread_id=thread,
    )


async def refuse_not_owner(update: Update, context: Context, owner_id: int) -> None:
    """Someone pressed another member's button: say whose it is, change nothing."""
    owner = await context.repo.user(owner_id)
    name = (owner or {}).get("first_name") or "?"
    assert update.callback_query is not None
    await update.callback_query.answer(
        t(context, "alert.not_yours", name=name)[:200], show_alert=True
    )
