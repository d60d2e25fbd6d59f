"""One bot per database and per token, and a stop that takes at most 10 s whatever the
Bot API does. Real `python -m bot` processes against the stand-in."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from standin import STANDIN_TOKEN, FakeTelegram, User, spawn_bot
from tests.conftest import eventually
from tests.test_startup import GOOD_TOKEN, run_bot


def inbox(db: Path) -> list[int]:
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return [r[0] for r in con.execute("SELECT update_id FROM inbox ORDER BY update_id")]
        finally:
            con.close()
    except sqlite3.OperationalError:  # not created yet
        return []


def error_lines(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("error:")]


async def test_a_second_process_on_the_same_database_exits_at_once_with_one_line(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    db = tmp_path / "bot.sqlite3"
    first = await spawn_bot(tg.base_url, str(db), log_path=str(tmp_path / "first.log"))
    try:
        await tg.wait_polling()
        began = time.monotonic()
        rc, out = await run_bot(
            tmp_path,
            {
                "TELEGRAM_BOT_TOKEN": GOOD_TOKEN,
                "TELEGRAM_API_BASE_URL": tg.base_url,
                "DATABASE_PATH": str(db),
            },
        )
        took = time.monotonic() - began
        assert rc == 2 and took < 5, (rc, took, out)
        errors = [line for line in out.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "another bot process" in errors[0], out
        assert f"pid {first.pid}" in errors[0] and "Traceback" not in out
        assert first.returncode is None  # the first one keeps running
        reply = await tg.reply_to(tg.user_sends(User(8001, "Bo", "en"), text="/vram 7b"))
        assert "VRAM per card" in reply.result["text"]
    finally:
        tg.release_pollers()
        first.terminate()
        await first.wait()


async def test_a_409_conflict_stops_the_bot_with_one_clear_line(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """Two processes polling with one token from different databases (another machine):
    Telegram ends one poll with 409; the bot that gets it stops instead of polling on."""
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    procs = [
        await spawn_bot(tg.base_url, str(tmp_path / f"{n}.sqlite3"), log_path=str(log))
        for n, log in zip("ab", logs, strict=True)
    ]
    try:
        done, _ = await asyncio.wait([asyncio.create_task(p.wait()) for p in procs], timeout=30)
        assert done, "neither process stopped on 409"
        assert tg.conflicts >= 1
        stopped = [(p, log) for p, log in zip(procs, logs, strict=True) if p.returncode is not None]
        for proc, log in stopped:
            assert proc.returncode == 2
            (line,) = error_lines(log)
            assert "409 Conflict" in line and STANDIN_TOKEN not in log.read_text()
            assert "Traceback" not in log.read_text()
    finally:
        tg.release_pollers()
        for p in procs:
            if p.returncode is None:
                p.terminate()
                await p.wait()


async def test_sigterm_stops_in_time_while_the_bot_api_hangs_and_nothing_is_lost(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """STOP_TIMEOUT_S (default 10) bounds the stop; its least, 3, here: the update still
    in progress is left for the next start when the budget runs out, and the process is gone
    long before the hanging Bot API (60 s) or the default budget would let it go."""
    db = tmp_path / "bot.sqlite3"
    log = tmp_path / "bot.log"
    proc = await spawn_bot(tg.base_url, str(db), log_path=str(log), STOP_TIMEOUT_S="3")
    try:
        await tg.wait_polling()
        tg.fail_next("sendMessage", 0, delay_s=60, count=100)  # the Bot API stops answering
        update = tg.user_sends(User(8002, "Bo", "en"), text="/vram 7b")
        await eventually(lambda: inbox(db) == [update["update_id"]], "the update in the inbox")
        await eventually(lambda: tg.injected.get("slow") == 1, "its answer's send, hanging")
        began = time.monotonic()
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 15)
        took = time.monotonic() - began
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    # not a speed check: 3 s of budget, and slack for a busy machine's process exit, still
    # well under the default budget (10 s) and the hang (60 s)
    assert took < 3 + 5, took
    assert "left for the next start" in log.read_text()  # the budget ran out, not the hang
    assert proc.returncode == 0, log.read_text()
    assert inbox(db) == [update["update_id"]]  # the unfinished update is kept...

    tg.faults.clear()  # ...and the next start answers it
    again = await spawn_bot(tg.base_url, str(db), log_path=str(log))
    try:
        reply = await tg.reply_to(update, timeout=20)
        assert "VRAM per card" in reply.result["text"]
    finally:
        tg.release_pollers()
        again.terminate()
        await again.wait()
