"""Small things a new user meets first: /help keeps each command on its own line in both
languages; a number typed at a wizard step where it is no answer (a button's position) is
asked again in the user's language instead of taken as the value; `python -m bot --local`
numbers the skip button 0 at every step."""

from __future__ import annotations

import pytest

from advisor.render import render
from bot.local import _show
from standin import Call, FakeTelegram, User
from tests.conftest import press, say, shown


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("group", [False, True])
def test_help_keeps_the_inline_line_apart_from_the_lab_line(lang: str, group: bool) -> None:
    """Was: "/lab — your own cards: your answers start with themIn any chat: …"."""
    text = render("help", lang, group=group, bot_username="GpuAdvisorBot", plain=True)
    lines = text.splitlines()
    inline = "In any chat" if lang == "en" else "在任何对话里"
    assert any(line.startswith(inline) for line in lines), text
    assert not [line for line in lines if "/lab" in line and inline in line]
    # every command's line starts with it: no two glued together
    commands = [line for line in lines if line.startswith("/")]
    assert all(line.count("/lab") <= 1 and line.count("/start") <= 1 for line in commands)


async def test_a_number_at_the_precision_step_is_asked_again(tg: FakeTelegram, bot) -> None:
    ann = User(3301, "Ann", "en")
    step = await press(tg, ann, await say(tg, ann, "/start"), "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-7B")
    again = await say(tg, ann, "8")
    text = shown(again)
    assert "“8” alone does not answer this step" in text and "Step 2/5" in text
    assert "Precision / quantization:" not in text  # nothing recorded for the step
    done = await say(tg, ann, "int4")
    assert "Step 3/5" in shown(done) and "✓ Precision / quantization: int4" in shown(done)


async def test_a_number_at_the_context_step_is_asked_again_in_chinese(
    tg: FakeTelegram, bot
) -> None:
    li = User(3302, "李雷", "zh-hans")
    step = await press(tg, li, await say(tg, li, "/start"), "运行大模型")
    step = await press(tg, li, step, "Qwen2.5-7B")
    step = await press(tg, li, step, "INT8")
    again = await say(tg, li, "8")
    assert "这一步不能只填数字“8”" in shown(again) and "第 3/5 步" in shown(again)
    batch = await say(tg, li, "8192")  # a context in tokens is taken
    assert "第 4/5 步" in shown(batch)
    budget = await say(tg, li, "16")  # at the batch step a number is the batch
    assert "批大小" in shown(budget) and "16" in shown(budget) and "第 5/5 步" in shown(budget)


def _page(skip_after: int) -> Call:
    row = [{"text": f"c{i}", "callback_data": f"w|7|c|precision|{i}"} for i in range(skip_after)]
    nav = [
        {"text": "⬅ Back", "callback_data": "w|7|b"},
        {"text": "Skip ⏭", "callback_data": "w|7|s|precision"},
        {"text": "✖ Cancel", "callback_data": "w|7|x"},
    ]
    return Call(
        "editMessageText", {"text": "step", "reply_markup": {"inline_keyboard": [row, nav]}}
    )


def test_local_try_out_numbers_the_skip_button_0_at_every_step(capsys) -> None:
    for choices in (5, 6, 3):
        pressed: dict[str, str] = {}
        _show(_page(choices), pressed)
        assert pressed["0"] == "w|7|s|precision"
        assert pressed[str(choices + 1)] == "w|7|b" and pressed[str(choices + 2)] == "w|7|x"
        assert "[0] Skip ⏭" in capsys.readouterr().out
