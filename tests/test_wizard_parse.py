"""The wizard parses a draft of buttons only when a parse can change what it does (each
press made a query line never seen before, ~1 ms to parse). These tests try every
button of every task against the parser, so a catalog or vocabulary change that breaks an
assumption of bot.wizard_draft.check_now / next_step fails here, not in a chat."""

from __future__ import annotations

import random

import pytest

from advisor.parse import parse_query
from bot import wizard_draft
from bot.choices import wizard_spec

SPEC = wizard_spec()


def _model_step(task: str) -> str | None:
    first = SPEC["tasks"][task]["steps"][0]
    return first if SPEC["steps"][first].get("fills") == "model" else None


def _lines(task: str) -> list[tuple[str, str | None, str]]:
    """(query line, step answered by its last token, that token) for the task with each of
    its models, alone and with each button of each other step."""
    token = SPEC["tasks"][task]["token"]
    model_step = _model_step(task)
    models = [c["token"] for c in SPEC["steps"][model_step]["choices"]] if model_step else [""]
    out = []
    for model in models:
        base = " ".join(x for x in (token, model) if x)
        out.append((base, model_step, model))
        for step in SPEC["tasks"][task]["steps"]:
            if step != model_step:
                out.extend(
                    (f"{base} {c['token']}", step, c["token"])
                    for c in SPEC["steps"][step]["choices"]
                )
    return out


@pytest.mark.parametrize("task", list(SPEC["tasks"]))
def test_only_refusable_steps_have_buttons_the_parser_refuses(task: str) -> None:
    refused = [
        (line, step)
        for line, step, _ in _lines(task)
        if step is not None
        and not SPEC["steps"][step].get("refusable", False)
        and not parse_query(line).ok
    ]
    assert refused == [], "mark these steps refusable = true in bot/wizard.toml"


@pytest.mark.parametrize("task", list(SPEC["tasks"]))
def test_a_button_answers_only_its_own_step(task: str) -> None:
    steps = SPEC["tasks"][task]["steps"]
    model_step = _model_step(task)
    answered_elsewhere = [
        (line, other)
        for line, step, _ in _lines(task)
        for other in steps
        if other not in (step, model_step)
        and wizard_draft.answered_by_text(other, parse_query(line))
    ]
    assert answered_elsewhere == []


def _next_step_parsing(draft: dict) -> str | None:
    """bot.wizard_draft.next_step as it was: the draft parsed whatever it holds."""
    return wizard_draft.next_step(dict(draft, typed=True))


def _random_drafts(n: int) -> list[dict]:
    """Drafts of buttons alone, as a member builds them: steps answered in order, some
    skipped (empty token), some left unanswered."""
    rng = random.Random(18)
    drafts = []
    for _ in range(n):
        task = rng.choice(list(SPEC["tasks"]))
        draft = {"owner": 1, "task": task, "answers": {}, "path": [], "msg": None, "typed": False}
        for step in SPEC["tasks"][task]["steps"][: rng.randint(0, 6)]:
            choices = SPEC["steps"][step]["choices"]
            pick = rng.choice(choices) if rng.random() < 0.85 else {"label": "-", "token": ""}
            wizard_draft.record_answer(draft, step, pick["label"], pick["token"])
        drafts.append(draft)
    return drafts


def test_next_step_of_a_draft_of_buttons_is_what_parsing_it_gives() -> None:
    drafts = _random_drafts(400)
    assert sum(bool(d["answers"]) for d in drafts) > 300
    for draft in drafts:
        assert wizard_draft.next_step(draft) == _next_step_parsing(draft), draft


def test_a_press_is_checked_when_it_can_be_refused_or_its_line_is_parsed_anyway() -> None:
    draft = {"owner": 1, "task": "infer", "answers": {}, "path": [], "msg": None, "typed": False}
    wizard_draft.record_answer(draft, "model_llm", "llama-2-13b", "llama-2-13b")
    wizard_draft.record_answer(draft, "precision_infer", "BF16", "bf16")
    # next: context, whose page states the engine's assumed context (parses this line)
    assert wizard_draft.check_now(draft, "precision_infer")
    wizard_draft.record_answer(draft, "context", "128k", "ctx 131072")
    assert wizard_draft.check_now(draft, "context")  # refusable: 128k on a 4k model
    assert not parse_query(wizard_draft.draft_query(draft)).ok
    draft["answers"]["context"] = ["4k", "ctx 4096"]
    wizard_draft.record_answer(draft, "batch", "4", "batch 4")
    assert not wizard_draft.check_now(draft, "batch")  # next: budget, which states nothing
    wizard_draft.record_answer(draft, "budget", "$1/h", "$1/h")
    assert wizard_draft.check_now(draft, "budget")  # the last step: the answer's own line
    assert wizard_draft.check_now(dict(draft, typed=True), "batch")
    old = {k: v for k, v in draft.items() if k != "typed"}  # saved before the flag
    assert wizard_draft.check_now(old, "batch")
