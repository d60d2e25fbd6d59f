"""Every secret setting is out of the logs, at DEBUG too (PTB logs each request's
parameters there, setWebhook's secret_token among them), in both formats (bot.logs)."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.logs import JsonFormatter, RedactingFormatter, hashed_id, secrets_of, use_id_key
from bot.settings import Settings
from hublookup.settings import HubSettings
from standin import STANDIN_TOKEN, FakeTelegram, User, spawn_bot
from tests.test_webhook import free_port

WEBHOOK_SECRET = "webhook-secret-for-the-log-test_42"
HF_TOKEN = "hf_log_test_token_0123456789abcdef"


@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_no_secret_setting_reaches_a_debug_log(tmp_path: Path, log_format: str) -> None:
    port = free_port()
    log_path = tmp_path / "bot.log"
    async with FakeTelegram() as tg:
        bot = await spawn_bot(
            tg.base_url,
            str(tmp_path / "bot.sqlite3"),
            str(log_path),
            LOG_FORMAT=log_format,
            LOG_LEVEL="DEBUG",
            WEBHOOK_URL=f"http://127.0.0.1:{port}/tg",
            WEBHOOK_SECRET=WEBHOOK_SECRET,
            WEBHOOK_PORT=str(port),
            HF_TOKEN=HF_TOKEN,
        )
        try:
            for _ in range(400):
                if tg.webhook is not None:
                    break
                await asyncio.sleep(0.05)
            assert tg.webhook is not None and tg.webhook["secret_token"] == WEBHOOK_SECRET
            await tg.reply_to(tg.user_sends(User(821), text="/help"), timeout=15)
        finally:
            bot.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(bot.wait(), 20) == 0
    text = log_path.read_text()
    assert "setWebhook" in text  # the DEBUG line with its parameters was written…
    assert "<webhook_secret>" in text  # …with the secret taken out
    for secret in (WEBHOOK_SECRET, HF_TOKEN, STANDIN_TOKEN, STANDIN_TOKEN.split(":")[1]):
        assert secret not in text


def test_every_secret_setting_is_redacted_in_tracebacks_too() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        telegram_bot_token=SecretStr(STANDIN_TOKEN),
        webhook_secret=SecretStr(WEBHOOK_SECRET),
    )
    hub = HubSettings(_env_file=None, hf_token=SecretStr(HF_TOKEN))  # type: ignore[call-arg]
    secrets = secrets_of(settings, hub)
    assert set(secrets) == {STANDIN_TOKEN, WEBHOOK_SECRET, HF_TOKEN}
    try:
        raise RuntimeError(f"{STANDIN_TOKEN} {WEBHOOK_SECRET} {HF_TOKEN}")
    except RuntimeError:
        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "at %s", (WEBHOOK_SECRET,), sys.exc_info()
        )
    for formatter in (RedactingFormatter("%(message)s", secrets), JsonFormatter(secrets)):
        line = formatter.format(record)
        assert all(s not in line for s in secrets), line
        assert "<token>" in line and "<webhook_secret>" in line and "<hf_token>" in line


def test_ids_at_info_are_keyed_hashes() -> None:
    use_id_key("key-one")
    first = hashed_id(12345)
    assert first == hashed_id(12345) and first != hashed_id(12346)
    assert "12345" not in first and len(first) == 12
    use_id_key("key-two")
    assert hashed_id(12345) != first  # not a plain hash anyone can recompute
