"""Greetings and off-topic lines through the real bot: answered by their kind, as the CLI
answers them (advisor.kinds out_of_scope), never with the "which model?" warning and the
task menu. The review of 2026-12-07 saw "⚠️ 哪个模型…" where the CLI greeted: after /start
the task menu's step read the typed line as a wizard answer (bot/wizard.py on_text)."""

from __future__ import annotations

import pytest

from advisor.kinds import answer_kind
from advisor.parse import parse_query
from advisor.render import render
from standin import FakeTelegram, User
from tests.conftest import say, shown


@pytest.mark.parametrize(
    ("text", "lang"),
    [("你好 在吗", "zh-hans"), ("今天天气怎么样", "zh-hans"), ("hi", "en")],
)
async def test_small_talk_is_answered_as_the_cli_answers_it(
    tg: FakeTelegram, bot, text: str, lang: str
) -> None:
    reply = shown(await say(tg, User(3101, "Ann", lang), text))
    assert "⚠️" not in reply and "哪个模型" not in reply and "Which model" not in reply, reply
    parsed = parse_query(text)
    assert parsed.question_kind == "out_of_scope"
    zh = lang.startswith("zh")
    result = answer_kind(parsed, "CNY" if zh else "USD")
    cli = render("out_of_scope", "zh" if zh else "en", plain=True, result=result, parsed=parsed)
    # the reply's first line is the CLI's (the bot may add buttons, not other words)
    assert cli.strip().splitlines()[0] in reply, (cli, reply)


async def test_a_greeting_after_an_answer_is_not_merged_into_it(tg: FakeTelegram, bot) -> None:
    li = User(3102, "李雷", "zh-hans")
    await say(tg, li, "qwen2.5-7b bf16 推理 一张4090够吗")
    reply = shown(await say(tg, li, "你好 在吗"))
    assert "Qwen2.5 7B" not in reply and "⚠️" not in reply, reply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("你好 在吗", "你好！"),
        ("今天天气怎么样", "这个问题我答不了"),
        ("3090能跑啥模型", "GeForce RTX 3090 能跑什么"),
        ("4090 和 a100 40g 哪个适合跑微调", "GeForce RTX 4090 对比 A100 40GB SXM4"),
    ],
)
async def test_a_line_typed_at_the_task_menu_is_answered_by_its_kind(
    tg: FakeTelegram, bot, text: str, expected: str
) -> None:
    li = User(3103, "李雷", "zh-hans")
    await say(tg, li, "/start")
    reply = shown(await say(tg, li, text))
    assert expected in reply and "⚠️ 哪个模型" not in reply, reply
