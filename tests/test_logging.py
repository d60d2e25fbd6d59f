"""LOG_FORMAT=json: one JSON object per line, one line per update with its id, chat type,
handler, latency and outcome; never the token; never the message text at INFO."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from pathlib import Path

from bot.logs import JsonFormatter
from standin import STANDIN_TOKEN, FakeTelegram, User, spawn_bot
from tests.conftest import eventually
from tests.test_webhook import free_port

PRIVATE_WORDS = "qwen2.5-14b my-thesis-secret-project"


async def test_json_lines_of_a_webhook_bot_process(tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "bot.log"
    async with FakeTelegram() as tg:
        bot = await spawn_bot(
            tg.base_url,
            str(tmp_path / "bot.sqlite3"),
            str(log_path),
            LOG_FORMAT="json",
            LOG_LEVEL="INFO",
            WEBHOOK_URL=f"http://127.0.0.1:{port}/tg",
            WEBHOOK_SECRET="json-log-test",
            WEBHOOK_PORT=str(port),
        )
        try:
            await eventually(lambda: tg.webhook is not None, "the bot set its webhook")
            await tg.reply_to(tg.user_sends(User(801), text=f"/vram {PRIVATE_WORDS}"), timeout=15)
            await tg.reply_to(tg.user_sends(User(801), text=PRIVATE_WORDS), timeout=15)
            # the update's line follows its reply
            await eventually(
                lambda: log_path.read_text().count('"update_id"') >= 2, "both updates logged"
            )
        finally:
            bot.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(bot.wait(), 20) == 0
    text = log_path.read_text()
    entries = [json.loads(line) for line in text.splitlines()]  # every line is one object
    updates = [e for e in entries if "update_id" in e]
    assert [(e["update_id"], e["chat_type"], e["handler"], e["outcome"]) for e in updates] == [
        (1, "private", "/vram", "ok"),
        (2, "private", "text", "ok"),
    ]
    assert all(isinstance(e["latency_ms"], float) and e["latency_ms"] > 0 for e in updates)
    assert "my-thesis-secret-project" not in text
    assert STANDIN_TOKEN not in text and STANDIN_TOKEN.split(":")[1] not in text


def test_the_token_is_taken_out_of_tracebacks_too() -> None:
    token = "123456:abcdefghijklmnopqrstuvwxyz0123456789"
    try:
        raise RuntimeError(f"GET https://api.telegram.org/bot{token}/getMe failed")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", None, sys.exc_info())
    line = JsonFormatter(token).format(record)
    assert token not in line and "<token>" in json.loads(line)["exc"]
