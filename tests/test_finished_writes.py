"""A handled update's writes (bot.inbox.Inbox.done): its state is written before its inbox
row is deleted, the update does not wait for either (the next press of the same member is
answered while they are held up), and a clean stop waits for them."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from standin import FakeTelegram, User
from tests.conftest import halt, launch, make_settings, press, say, shown


def stored(db: Path) -> tuple[dict[str, str], list[int]]:
    con = sqlite3.connect(db)
    try:
        state = dict(con.execute("SELECT kind || ' ' || key, data FROM ptb_state").fetchall())
        inbox = [r[0] for r in con.execute("SELECT update_id FROM inbox")]
    finally:
        con.close()
    return state, inbox


async def test_writes_wait_for_no_update_and_keep_their_order(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    db = tmp_path / "bot.sqlite3"
    app = await launch(make_settings(tg, db))
    order: list[str] = []
    held = asyncio.Event()
    flush, delete = app.update_persistence, app.repo.inbox_delete

    async def slow_flush() -> None:
        order.append("state")
        await flush()

    async def held_delete(ids: list[int]) -> None:
        order.append("inbox")
        await held.wait()  # a slow disk: the delete does not return until released
        await delete(ids)

    app.update_persistence = slow_flush  # type: ignore[method-assign]
    app.repo.inbox_delete = held_delete  # type: ignore[method-assign]
    ann = User(3101, "Ann", "en")
    try:
        menu = await say(tg, ann, "/start")
        # the delete of /start is held, yet Ann's presses (same member: one at a time) go on
        step = await press(tg, ann, menu, "Run an LLM")
        step = await press(tg, ann, step, "Qwen2.5-14B")
        assert "✓ Model: Qwen2.5-14B" in shown(step)
        _, inbox = stored(db)
        assert inbox, "nothing held: the test did not hold the delete"
        assert order[:2] == ["state", "inbox"]  # the state of /start, then its row
    finally:
        held.set()
        await halt(tg, app)  # a clean stop waits for the held writes
    state, inbox = stored(db)
    assert inbox == []
    draft = json.loads(state["user_data 3101"])["wizard"]["3101"]
    assert draft["answers"]["model_llm"][1] == "qwen2.5-14b"  # the last press's step
