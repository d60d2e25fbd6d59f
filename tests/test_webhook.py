"""Webhook mode end to end: the stand-in POSTs updates to the bot's own server, as
Telegram does, with and without the secret token."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from telegram.ext import ApplicationBuilder

from bot.app import build_application
from bot.context import AdvisorApplication
from bot.runner import ops_server, start, stop
from bot.settings import Settings
from bot.sqlite_worker import changed
from bot.webhook import OpsServer
from standin import FakeTelegram, User
from tests.conftest import TOKEN, make_settings

SECRET = "s3cret-token_for-tests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def until(condition: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if await condition():
            return True
        await asyncio.sleep(0.05)
    return await condition()


async def inbox_empty(app: AdvisorApplication) -> bool:
    return await app.repo.inbox_pending() == []


def webhook_settings(tg: FakeTelegram, db: Path) -> Settings:
    port = free_port()
    return make_settings(
        tg,
        db,
        webhook_url=f"http://127.0.0.1:{port}/telegram/hook",
        webhook_secret=SECRET,
        webhook_port=port,
    )


async def launch_webhook(settings: Settings) -> tuple[AdvisorApplication, OpsServer]:
    app = build_application(ApplicationBuilder().token(TOKEN), settings)
    server = ops_server(app)
    assert server is not None and server.webhook
    await start(app, server=server)
    return app, server


@pytest.fixture
async def hooked(
    tg: FakeTelegram, tmp_path: Path
) -> AsyncIterator[tuple[AdvisorApplication, OpsServer]]:
    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    yield app, server
    await stop(app, server=server)


async def test_start_sets_the_webhook_with_the_secret(tg: FakeTelegram, hooked) -> None:
    app, server = hooked
    assert tg.webhook is not None
    assert tg.webhook["url"] == app.settings.webhook_url
    assert tg.webhook["secret_token"] == SECRET
    assert not tg.sent("getUpdates")  # nobody polls in webhook mode


async def test_a_conversation_runs_over_the_webhook(tg: FakeTelegram, hooked) -> None:
    user = User(501)
    reply = await tg.reply_to(tg.user_sends(user, text="/vram llama 3 8b fp16"), timeout=10)
    assert "GiB" in reply.result["text"]
    assert 200 in tg.webhook_answers
    app, _ = hooked
    assert await until(lambda: inbox_empty(app))  # handled, so out of the inbox


async def test_a_post_without_the_secret_is_refused(tg: FakeTelegram, hooked) -> None:
    app, _ = hooked
    tg._stop_webhook()  # noqa: SLF001 - post by hand only, no automatic delivery
    tg.webhook = {"url": app.settings.webhook_url, "secret_token": SECRET, "max_connections": 1}
    update = {
        "update_id": 9001,
        "message": {
            "message_id": 1,
            "date": 0,
            "chat": {"id": 502, "type": "private"},
            "from": {"id": 502, "is_bot": False, "first_name": "X"},
            "text": "/help",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }
    assert await tg.post_update(update, None) == 403
    assert await tg.post_update(update, "wrong") == 403
    assert await app.repo.inbox_pending() == []  # refused requests never reach the inbox
    assert not tg.sent("sendMessage")
    assert await tg.post_update(update, SECRET) == 200
    call = await tg.wait_for(lambda c: c.method == "sendMessage", timeout=10)
    assert str(call.params["chat_id"]) == "502"
    # with the secret but not an update: refused, and nothing stored that a replay would
    # choke on
    assert await tg.post_update({"update_id": 9002, "message": "not a message"}, SECRET) == 400
    assert await tg.post_update({"no": "update_id"}, SECRET) == 400
    assert await until(lambda: inbox_empty(app))
    metrics = app.metrics.render().decode()
    assert 'bot_webhook_refused_total{reason="secret"} 2.0' in metrics


async def test_no_200_before_the_update_is_stored(tg: FakeTelegram, hooked) -> None:
    """A failed inbox write answers 500, so Telegram keeps the update and sends it again;
    once the database takes writes, the same update is stored, answered 200 and handled."""
    app, _ = hooked
    writer = app.repo._writer  # noqa: SLF001 - the bot's one write connection

    async def read_only(on: bool) -> None:
        await writer.run(lambda db: changed(db, f"PRAGMA query_only = {int(on)}"))

    await read_only(True)
    update = tg.user_sends(User(503), text="/help")

    async def refused() -> bool:
        return 500 in tg.webhook_answers

    assert await until(refused)
    assert 200 not in tg.webhook_answers
    assert not tg.sent("sendMessage")
    await read_only(False)
    await tg.reply_to(update, timeout=10)
    assert tg.webhook_answers[-1] == 200


async def test_updates_left_in_the_inbox_are_replayed_in_webhook_mode(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """An update answered 200 (so Telegram forgets it) but not handled before the process
    died is handled at the next start, from the inbox."""
    settings = webhook_settings(tg, tmp_path / "bot.sqlite3")
    app, server = await launch_webhook(settings)
    update = tg.user_sends(User(504), text="/help")
    await tg.reply_to(update, timeout=10)
    await stop(app, server=server)
    # as if the process had died after the 200 and before handling: the row is back
    from bot.storage import Repository

    repo = await Repository.open(settings.database_path)
    stored = {k: v for k, v in update.items() if not k.startswith("_")}
    await repo.inbox_add([{**stored, "update_id": 777}])
    await repo.close()
    sent_before, calls_before = len(tg.sent("sendMessage")), len(tg.calls)
    app, server = await launch_webhook(settings)
    try:
        await tg.wait_for(lambda c: c.method == "sendMessage" and c.seq >= calls_before, timeout=10)
        assert len(tg.sent("sendMessage")) == sent_before + 1
        assert await until(lambda: inbox_empty(app))
    finally:
        await stop(app, server=server)


async def test_a_sigkilled_webhook_bot_loses_no_update(tmp_path: Path) -> None:
    """The process is killed mid-stream: whatever Telegram got a 200 for is in the inbox,
    whatever it did not is POSTed again; after the restart every update is answered."""
    from standin import spawn_bot

    port = free_port()
    env = {
        "WEBHOOK_URL": f"http://127.0.0.1:{port}/tg",
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_PORT": str(port),
    }
    db = str(tmp_path / "bot.sqlite3")
    async with FakeTelegram() as tg:
        bot = await spawn_bot(tg.base_url, db, **env)
        try:
            while tg.webhook is None:
                await asyncio.sleep(0.05)
            users = [User(900 + i) for i in range(80)]
            for user in users:
                tg.user_sends(user, text="/vram 7b")
            await tg.wait_for(lambda c: c.method == "sendMessage", timeout=15)
            bot.kill()  # SIGKILL, a few answers in
            await bot.wait()
            answered_before = {str(c.params["chat_id"]) for c in tg.sent("sendMessage")}
            assert len(answered_before) < len(users)  # the kill did interrupt the stream
            bot = await spawn_bot(tg.base_url, db, **env)

            async def all_answered() -> bool:
                chats = {str(c.params["chat_id"]) for c in tg.sent("sendMessage")}
                return chats >= {str(u.id) for u in users}

            assert await until(all_answered, timeout=20)
        finally:
            bot.kill()
            await bot.wait()
