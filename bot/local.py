"""`python -m bot --local`: the real application against the in-process Bot API stand-in,
with a terminal as the chat. Type messages and commands; press a button by its number.
Nothing leaves the machine; state (language, history, a lab's machines) goes to a separate
database file beside the real one (data/advisor-local.sqlite3 by default) and is kept
between runs."""

from __future__ import annotations

import asyncio
import html
import logging
import re
import sys
import time
from pathlib import Path

from telegram.ext import ApplicationBuilder

from bot.app import build_application
from bot.instance import InstanceLock
from bot.runner import start, stop
from bot.schema import StorageError
from bot.settings import Settings
from standin import Call, FakeTelegram, User

LOCAL_TOKEN = "123456:local-try-out-token-not-a-real-one-000"
QUIET_S = 0.4


def _plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^<>]+>", "", text))


# The wizard's skip button (bot.callbacks: w|<uid>|s|<step>): pressed with 0 at every step,
# where its running number moved with the number of choices before it.
SKIP = re.compile(r"^w\|\d+\|s\|")


def _show(call: Call, buttons: dict[str, str]) -> None:
    result = call.result or {}
    verb = "(edited)" if call.method == "editMessageText" else ""
    print(f"\n🤖 {verb}\n{_plain(str(call.params.get('text', result.get('text', ''))))}")
    markup = call.params.get("reply_markup") or {}
    buttons.clear()
    for row in markup.get("inline_keyboard", []) if isinstance(markup, dict) else []:
        cells = []
        for b in row:
            numbered = len([k for k in buttons if k != "0"])
            key = "0" if SKIP.match(b["callback_data"]) else str(numbered + 1)
            buttons[key] = b["callback_data"]
            cells.append(f"[{key}] {b['text']}")
        print("   " + "  ".join(cells))


def _save_photo(call: Call, db: Path) -> Path:
    """A photo the bot sent (the 📊 chart) as a file beside the try-out's database; its path
    is printed in place of the picture."""
    path = db.with_name(f"chart-{call.result['message_id']}.png")
    path.write_bytes(call.params["_files"]["photo"])
    caption = _plain(str(call.params.get("caption", "")))
    print(f"\n🤖 📷 {caption}\n   {path.resolve()}")
    return path


async def run_local(settings: Settings, lang: str) -> int:
    logging.getLogger().setLevel(
        max(logging.WARNING, logging.getLogger().level)
    )  # keep the chat readable
    for name in ("bot.storage", "bot.schema"):  # a new database on the first run is expected
        logging.getLogger(name).setLevel(logging.ERROR)
    db = settings.database_path.with_name(settings.database_path.stem + "-local.sqlite3")
    lock = InstanceLock(db)
    try:
        lock.acquire()  # another try-out on this file would lose its database to this one
    except StorageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        return await _converse(settings, db, lang)
    finally:
        lock.release()


async def _converse(settings: Settings, db: Path, lang: str) -> int:
    local = settings.model_copy(update={"database_path": db, "rate_limit_overall_per_s": 1000.0})
    # Update and message ids start past the last run's (milliseconds since 1970: a run would
    # need more messages than milliseconds between two runs to reach the next one's): a
    # question kept from the last run never sits under an id of this run's messages, whose
    # buttons would then act on it, and no update of this run reads as handled.
    async with FakeTelegram(first_id=int(time.time() * 1000)) as tg:
        local = local.model_copy(update={"telegram_api_base_url": tg.base_url})
        app = build_application(ApplicationBuilder().token(LOCAL_TOKEN), local)
        await start(app, poll_timeout=1)
        user = User(id=1001, first_name="You", language_code="zh-hans" if lang == "zh" else "en")
        print(
            f"Local try-out (database {db}). Type a message or /start; a number presses that "
            "button; /quit or Ctrl-D leaves."
        )
        buttons: dict[str, str] = {}
        last_msg: dict | None = None
        seen = 0
        loop = asyncio.get_running_loop()
        tg.user_sends(user, text="/start")
        try:
            while True:
                # print what the bot sent until it has been quiet for a moment
                idle = 0.0
                while idle < QUIET_S:
                    await asyncio.sleep(0.05)
                    new = [
                        c
                        for c in tg.calls[seen:]
                        if c.method in ("sendMessage", "editMessageText", "sendPhoto")
                        and c.error is None
                    ]
                    if len(tg.calls) > seen:
                        idle = 0.0
                        seen = len(tg.calls)
                    else:
                        idle += 0.05
                    for c in new:
                        if c.method == "sendPhoto":
                            _save_photo(c, db)
                            continue
                        _show(c, buttons)
                        last_msg = c.result
                    if idle >= QUIET_S and app.update_processor.busy:  # type: ignore[attr-defined]
                        # still working (a chart is drawn in a thread): wait for it
                        await app.update_processor.idle()  # type: ignore[attr-defined]
                        idle = 0.0
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line or line.strip() in ("/quit", "/exit"):
                    break
                line = line.strip()
                if not line:
                    continue
                if line in buttons and last_msg:
                    tg.user_clicks(user, last_msg, buttons[line])
                else:
                    tg.user_sends(user, text=line)
        finally:
            await stop(app)
    return 0
