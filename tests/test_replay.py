"""Button presses replayed after a restart: Telegram refuses to take an answer to a press
older than its window ("query is too old"). That is not an error: the step still applies."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from standin import FakeTelegram, User
from tests.conftest import button, halt, launch, make_settings, say, shown


def rows_of(db: Path, user_id: int) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return {
            "history": con.execute(
                "SELECT COUNT(*) FROM history WHERE user_id = ?", (user_id,)
            ).fetchone()[0],
            "users": con.execute(
                "SELECT COUNT(*) FROM users WHERE user_id = ?", (user_id,)
            ).fetchone()[0],
            "state": con.execute(
                "SELECT COUNT(*) FROM ptb_state WHERE key = ? OR key LIKE ?",
                (str(user_id), f"%{user_id}]"),
            ).fetchone()[0],
        }
    finally:
        con.close()


async def refused_answers(tg: FakeTelegram, at_least: int = 1) -> list[str]:
    """The button answers Telegram refused, once `at_least` are in: a press's answer travels
    beside its edit (bot.delivery.answer_soon), so it may land just after the edit."""
    for _ in range(150):
        refused = [c.error or "" for c in tg.sent("answerCallbackQuery") if c.error]
        if len(refused) >= at_least:
            break
        await asyncio.sleep(0.02)
    return refused


async def test_a_forget_pressed_while_the_bot_was_down_completes_after_restart(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    db = tmp_path / "bot.sqlite3"
    settings = make_settings(tg, db)
    bo = User(7001, "Bo", "en")
    app = await launch(settings)
    await say(tg, bo, "/vram 7b")
    await say(tg, bo, "/start")  # a wizard half-way: saved state to delete too
    confirm = await say(tg, bo, "/forget")
    await halt(tg, app)
    assert rows_of(db, bo.id)["history"] == 1

    tg.callback_answer_window_s = 0.2
    press = tg.user_clicks(bo, confirm.result, button(confirm, "Yes, delete"))
    await asyncio.sleep(0.4)  # the press is older than Telegram's window when it is handled
    app = await launch(settings)
    try:
        done = await tg.reply_to(press, timeout=10)
        assert "Deleted 1 question(s)" in shown(done)
        assert any("query is too old" in e for e in await refused_answers(tg))
    finally:
        await halt(tg, app)
    assert rows_of(db, bo.id) == {"history": 0, "users": 0, "state": 0}


async def test_a_wizard_step_pressed_late_still_applies(tg: FakeTelegram, bot) -> None:
    tg.callback_answer_window_s = 0.0  # every answer to a button comes too late
    ann = User(7002, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await tg.reply_to(tg.user_clicks(ann, menu.result, button(menu, "Run an LLM")))
    assert "Step 1/5" in shown(step)
    step = await tg.reply_to(tg.user_clicks(ann, step.result, button(step, "Qwen2.5-14B")))
    assert "✓ Model: Qwen2.5-14B" in shown(step)
    assert len(await refused_answers(tg, 2)) == 2
    assert not tg.sent("sendMessage", ann.id)[1:]  # no apology: nothing went wrong
