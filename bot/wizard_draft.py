"""The guided conversation's draft (`bot.wizard`): where it is kept, the steps of its task,
the query line its answers make, which step comes next, and how a typed answer is read
(a bare number, a step's `typed` template, the step whose field the text sets). No
message is sent from here; `bot.wizard` shows the pages and handles the buttons.
"""

from __future__ import annotations

import re
from typing import Any

from telegram import Update

from advisor.parse import ParsedQuery, parse_query
from advisor.parse.followup import fields_named
from advisor.recommend.estimates import estimate  # memoized: the same drafts recur
from bot.choices import wizard_spec
from bot.context import Context


def _drafts(context: Context) -> dict:
    assert context.user_data is not None
    return context.user_data.setdefault("wizard", {})


def _chat_key(update: Update) -> str:
    """A draft per chat: the member's own in each (every wizard update has a chat)."""
    chat = update.effective_chat
    assert chat is not None
    return str(chat.id)


def find_draft(update: Update, context: Context) -> dict | None:
    return _drafts(context).get(_chat_key(update))


def new_draft(update: Update, context: Context) -> dict:
    user = update.effective_user
    assert user is not None
    draft: dict[str, Any] = {
        "owner": user.id,
        "task": None,
        "answers": {},
        "path": [],
        "msg": None,
        "typed": False,
    }
    _drafts(context)[_chat_key(update)] = draft
    return draft


def drop_draft(update: Update, context: Context) -> None:
    _drafts(context).pop(_chat_key(update), None)


def draft_steps(draft: dict) -> list[str]:
    return wizard_spec()["tasks"][draft["task"]]["steps"] if draft["task"] else []


def draft_query(draft: dict, extra: tuple[str, str] | None = None) -> str:
    """The draft as one query line for the parser; `extra` = (step, text) being tried."""
    answers = dict(draft["answers"])
    if extra:
        answers[extra[0]] = ["", extra[1]]
    parts = [wizard_spec()["tasks"][draft["task"]]["token"]] if draft["task"] else []
    parts += [answers[s][1] for s in draft_steps(draft) if s in answers and answers[s][1]]
    return " ".join(parts)


def answered_by_text(step: str, parsed: ParsedQuery) -> bool:
    """A step whose answer the user already typed earlier ("qwen2.5-7b int4 32k")."""
    fills = wizard_spec()["steps"][step].get("fills")
    if parsed.workload is None or fills is None:
        return False
    source = parsed if fills == "budget" else parsed.workload
    return getattr(source, fills) is not None


def has_typed_answer(draft: dict) -> bool:
    """Whether an answer in the draft was typed (bot.wizard.on_text). Typed text can answer
    later steps too ("qwen2.5-7b int4 32k"); a button's token answers only its own step
    (tests/test_wizard_parse.py checks every button of every task). A draft saved before
    this flag existed counts as typed."""
    return bool(draft.get("typed", True))


def next_step(draft: dict) -> str | None:
    # Only typed text can answer a step ahead of the one asked: a draft of buttons alone
    # needs no parse to know its next step (a parse is ~1 ms for a line not seen before).
    parsed = (
        parse_query(draft_query(draft)) if draft["answers"] and has_typed_answer(draft) else None
    )
    for step in draft_steps(draft):
        if step in draft["answers"]:
            continue
        if parsed is not None and answered_by_text(step, parsed):
            continue
        if step == "epochs" and not (draft["answers"].get("data") or ["", ""])[1]:
            continue  # no data size: epochs change nothing
        return step
    return None


def stated_default(draft: dict, step: str) -> str | None:
    """What skipping this step means, as the engine would assume it for this draft (the
    model's own format, its context cap), else as wizard.toml states it."""
    field = wizard_spec()["steps"][step].get("assumed")
    parsed = parse_query(draft_query(draft)) if field and draft["answers"] else None
    if parsed is not None and parsed.workload is not None:
        for a in estimate(parsed.workload).assumed:
            if a.field == field:
                value = a.value
                if value.isdigit() and int(value) >= 1024 and int(value) % 1024 == 0:
                    value = f"{int(value) // 1024}k"
                return value.upper() if field == "weights_format" else value
    return wizard_spec()["steps"][step].get("shown_default")


def check_now(draft: dict, step: str) -> bool:
    """Whether a button's answer to `step` is checked by parsing the draft at once. Not
    when nothing can refuse it and nothing else reads the parse: no typed answer in the
    draft, a step whose choices the parser takes with any model (wizard.toml marks the
    others `refusable`; tests/test_wizard_parse.py tries them all), and a next step that
    states no engine assumption (`assumed`, which parses this same line: one parse
    either way). The last step is always checked (the answer parses it anyway).
    Why: each press made a line never seen before, parsed at ~1 ms (bench/load.py)."""
    if has_typed_answer(draft) or wizard_spec()["steps"][step].get("refusable", False):
        return True
    following = next_step(draft)
    return following is None or "assumed" in wizard_spec()["steps"][following]


def record_answer(draft: dict, step: str, shown: str, token: str) -> None:
    draft["answers"][step] = [shown, token]
    if step not in draft["path"]:
        draft["path"].append(step)


def a_button_number(step: str, text: str) -> bool:
    """A bare whole number typed at a step whose answers are not numbers (no `typed` in
    wizard.toml: precision, runtime, task…; a model step takes sizes), or under the step's
    `min_typed` (a context of 8 tokens): read as a button's position, which typing cannot
    press."""
    spec = wizard_spec()["steps"][step]
    if re.fullmatch(r"\s*\d+\s*", text) is None:
        return False
    if spec.get("typed"):  # "16" at the batch step is batch 16; "8" at the context step is not
        return int(text) < spec.get("min_typed", 0)
    return spec.get("fills", step) != "model" and not step.startswith("model")


def typed_token(step: str, text: str) -> str:
    """A bare number answers the step it was typed at: "16" at the batch step is "batch 16",
    "32k" at the context step "ctx 32k" (wizard.toml `typed`)."""
    template = wizard_spec()["steps"][step].get("typed")
    bare = text.strip()
    if template and re.fullmatch(r"\d+(?:\.\d+)?\s*[kKmMbB]?", bare):
        return template.format(bare)
    return text


def step_for_text(draft: dict, asked: str, typed: str) -> str:
    """The step a typed answer belongs to: the asked one if the text sets what it asks,
    else the step of this task whose field the text sets ("awq" typed at the context step
    is a precision; "llama-3.1-8b int4" a change of model)."""
    named = fields_named(typed)
    if not isinstance(named, set):
        return asked
    steps = wizard_spec()["steps"]

    def field(step: str) -> str:
        return steps[step].get("fills") or step

    if "model" in named:  # a model with its precision is a new model, not a precision
        return next((s for s in draft_steps(draft) if field(s) == "model"), asked)
    if field(asked) in named:
        return asked
    return next((s for s in draft_steps(draft) if field(s) in named), asked)
