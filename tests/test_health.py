"""/healthz: database writable, Bot API reachable, age of the last handled update."""

from __future__ import annotations

from pathlib import Path

import aiohttp
from telegram.ext import ApplicationBuilder

from bot.app import build_application
from bot.runner import ops_server, start, stop
from standin import FakeTelegram, User
from tests.conftest import TOKEN, make_settings
from tests.test_webhook import free_port, launch_webhook, webhook_settings


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
        assert report == {"database": "ok", "bot_api": "ok", "last_update_age_s": None}
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
        await app.repo._writer.run(lambda db: db.execute("PRAGMA query_only = 1"))  # noqa: SLF001
        status, report = await healthz(server.port)
        assert status == 503
        assert report["database"].startswith("error:") and "readonly" in report["database"]
        assert report["bot_api"] == "ok"
    finally:
        await app.repo._writer.run(lambda db: db.execute("PRAGMA query_only = 0"))  # noqa: SLF001
        await stop(app, server=server)


async def test_an_unreachable_bot_api_is_reported(tmp_path: Path) -> None:
    tg = await FakeTelegram().start()
    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    try:
        await tg.stop()  # Telegram gone: connection refused
        status, report = await healthz(server.port)
        assert status == 503
        assert report["database"] == "ok"
        assert report["bot_api"].startswith("error:")
    finally:
        await stop(app, budget_s=3, server=server)
