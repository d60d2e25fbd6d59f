"""The bot process is killed (SIGKILL) mid-traffic and started again on the same database:
no history row lost or duplicated, every conversation completed or resumable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from standin import FakeTelegram, FaultPlan, User, spawn_bot
from tests.conftest import buttons, eventually

USERS = 16
QUERIES = 3


def history_rows(db: Path) -> list[tuple[int, str]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute("SELECT user_id, raw_text FROM history ORDER BY id").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        con.close()


def inbox_rows(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute("SELECT count(*) FROM inbox").fetchone()[0]
    finally:
        con.close()


async def test_sigkill_mid_traffic_loses_and_duplicates_nothing(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    db, log = tmp_path / "bot.sqlite3", str(tmp_path / "bot.log")
    # Slow answers stretch the run so the kill lands in the middle of it.
    tg.fault_plan = FaultPlan(p_slow=1.0, slow_s=0.15, methods=("sendMessage",))
    first = await spawn_bot(tg.base_url, str(db), log_path=log)
    await tg.wait_polling()
    users = [User(6000 + i, f"u{i}", "en") for i in range(USERS)]
    for user in users:
        tg.user_sends(user, text="/start")
        for k in range(QUERIES):
            tg.user_sends(user, text=f"/vram {7 + k}b fp16")
    await eventually(
        lambda: len(tg.sent("sendMessage")) >= 2 * USERS, "menus and some answers, not all"
    )
    first.kill()
    await first.wait()
    answered_before = len(history_rows(db))
    assert 0 < answered_before < USERS * QUERIES, "the kill should land mid-run"

    tg.fault_plan = None
    second = await spawn_bot(tg.base_url, str(db), log_path=log)
    try:
        await tg.wait_polling()
        await eventually(lambda: len(history_rows(db)) >= USERS * QUERIES, "every question stored")
        # every update confirmed to Telegram and none left in the inbox: all handled, so a
        # duplicate row would be there by now
        await eventually(lambda: not tg.updates and inbox_rows(db) == 0, "every update handled")
        rows = history_rows(db)
        assert len(rows) == USERS * QUERIES  # none lost, none twice
        assert sorted(rows) == sorted(
            (u.id, f"{7 + k}b fp16") for u in users for k in range(QUERIES)
        )

        # Every wizard started before the kill continues: press its first button.
        for user in users:
            menu = next(
                c
                for c in reversed(tg.calls)
                if c.method == "sendMessage"
                and c.error is None
                and str(c.params["chat_id"]) == str(user.id)
                and "What do you want" in c.params["text"]
            )
            data = next(d for t, d in buttons(menu) if "Run an LLM" in t)
            step = await tg.reply_to(tg.user_clicks(user, menu.result, data), timeout=15)
            assert "Step 1/5" in step.result["text"]
    finally:
        tg.release_pollers()
        second.terminate()
        await second.wait()
