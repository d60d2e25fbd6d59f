"""/healthz: database writable, Bot API reachable, age of the last handled update."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from telegram.ext import ApplicationBuilder

from bot.app import build_application
from bot.runner import ops_server, start, stop
from bot.sqlite_worker import changed
from standin import FakeTelegram, User
from tests.conftest import TOKEN, make_settings
from tests.test_webhook import SECRET, free_port, launch_webhook, webhook_settings


async def healthz(port: int) -> tuple[int, dict]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/healthz") as response,
    ):
        return response.status, await response.json()


async def test_polling_mode_serves_health_on_health_port(tg: FakeTelegram, tmp_path: Path) -> None:
    settings = make_settings(tg, tmp_path / "bot.sqlite3", health_port=free_port())
    app = build_application(ApplicationBuilder().token(TOKEN), settings)
    server = ops_server(app)
    assert server is not None and not server.webhook
    await start(app, poll_timeout=1, server=server)
    try:
        status, report = await healthz(settings.health_port)
        assert status == 200
        assert report["database"] == "ok" and report["bot_api"] == "ok"
        assert report["last_update_age_s"] is None
        assert report["last_bot_api_answer_age_s"] is not None  # getUpdates answers
        await tg.reply_to(tg.user_sends(User(701), text="/help"))
        for _ in range(50):
            status, report = await healthz(settings.health_port)
            if report["last_update_age_s"] is not None:
                break
        assert status == 200 and 0 <= report["last_update_age_s"] < 5
    finally:
        tg.release_pollers()
        await stop(app, server=server)


async def test_a_read_only_database_is_reported(tg: FakeTelegram, tmp_path: Path) -> None:
    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    try:
        # root writes through file modes, so the connection itself is made read-only, as
        # SQLite does for a file it cannot write (same error: "attempt to write a readonly
        # database")
        await app.repo._writer.run(lambda db: changed(db, "PRAGMA query_only = 1"))  # noqa: SLF001
        status, report = await healthz(server.port)
        assert status == 503
        assert report["database"].startswith("error:") and "readonly" in report["database"]
        assert report["bot_api"] == "ok"
    finally:
        await app.repo._writer.run(lambda db: changed(db, "PRAGMA query_only = 0"))  # noqa: SLF001
        await stop(app, server=server)


async def test_health_checks_ask_telegram_nothing_and_write_at_most_once_per_interval(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """Twenty probes at once, and more after: no getMe (one per request before: 20
    clients made 432/s), and the database written once for all of them."""
    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    try:
        before = len(tg.sent())
        writes = app.metrics.db_write.labels("health_probe")
        probes_before = _count(writes)
        answers = await asyncio.gather(*(healthz(server.port) for _ in range(20)))
        answers += [await healthz(server.port) for _ in range(10)]
        assert all(status == 200 for status, _ in answers)
        assert all(report["bot_api"] == "ok" for _, report in answers)
        assert tg.sent()[before:] == []  # not one Bot API call
        assert _count(writes) - probes_before <= 2  # a reuse window may just have ended
    finally:
        await stop(app, server=server)


def _count(histogram) -> float:  # noqa: ANN001
    return next(
        s.value for m in histogram.collect() for s in m.samples if s.name.endswith("_count")
    )


async def test_an_unreachable_bot_api_is_reported(tmp_path: Path) -> None:
    """Telegram gone: the bot finds out from its own next request (its answer to an update
    that came by webhook), not from a getMe per probe."""
    tg = await FakeTelegram().start()
    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    try:
        hook = dict(tg.webhook or {})
        await tg.stop()  # Telegram gone: connection refused
        tg.webhook = hook  # its last webhook POST arrives all the same
        assert await tg.post_update(_help_update(9101), SECRET) == 200
        await app.update_processor.idle()  # type: ignore[attr-defined]
        status, report = await healthz(server.port)
        assert status == 503
        assert report["database"] == "ok"
        assert report["bot_api"].startswith("error:")
    finally:
        await stop(app, budget_s=3, server=server)


def _help_update(update_id: int, user_id: int = 702) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 0,
            "chat": {"id": user_id, "type": "private"},
            "from": {"id": user_id, "is_bot": False, "first_name": "H"},
            "text": "/help",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }
