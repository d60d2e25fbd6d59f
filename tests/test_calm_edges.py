"""Edges that are nobody's fault get no "something went wrong": a webhook body nested too
deep, a message without a sender, a button under a deleted message, an inline answer past
Telegram's window. And what the logs may hold about users (bot.logs)."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
import pytest

from bot.runner import stop
from standin import Chat, FakeTelegram, User
from tests.conftest import button, say, settled
from tests.test_webhook import SECRET, launch_webhook, webhook_settings

SORRY = ("went wrong", "出错")
GROUP = Chat(id=-100555, type="supergroup", title="lab")


def _apologies(tg: FakeTelegram) -> list[str]:
    return [
        c.params.get("text", "")
        for c in tg.sent("sendMessage")
        if any(s in c.params.get("text", "") for s in SORRY)
    ]


async def test_a_webhook_body_nested_100k_deep_is_a_400(tg: FakeTelegram, tmp_path: Path) -> None:
    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    try:
        deep = b'{"update_id": 1, "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                app.settings.webhook_url,
                data=deep,
                headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
            ) as response,
        ):
            assert response.status == 400
            assert "Traceback" not in await response.text()
        assert await app.repo.inbox_pending() == []
    finally:
        await stop(app, server=server)


async def test_a_message_without_a_sender_is_ignored_calmly(tg: FakeTelegram, bot) -> None:
    """A linked channel posting in its discussion group: `from` is absent, `sender_chat` is
    the channel. Nobody to answer; the next member is served as usual."""
    update = tg.user_sends(User(901, "X"), GROUP, "/vram 7b")
    assert update is not None
    del update["message"]["from"]  # before the bot polls it: same loop step
    update["message"]["sender_chat"] = {"id": -100999, "type": "channel", "title": "news"}
    reply = await say(tg, User(902, "Ann"), "/vram 7b", GROUP)
    assert "7B" in reply.result["text"] or "7b" in reply.result["text"].lower()
    await settled(bot)
    assert _apologies(tg) == []


async def test_a_button_under_a_deleted_message_gets_the_expired_alert(
    tg: FakeTelegram, bot
) -> None:
    user = User(903, "Del")
    menu = await say(tg, user, "/start")
    del tg.messages[(user.id, menu.result["message_id"])]  # the user deleted the menu

    tg.user_clicks(user, menu.result, button(menu, "Run an LLM"))
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery" and c.params.get("show_alert") in (True, "true")
        ),
        timeout=10,
    )
    assert "expired" in alert.params["text"].lower()
    await settled(bot)
    assert _apologies(tg) == []


async def test_an_inline_answer_past_telegrams_window_is_no_error(
    tg: FakeTelegram, bot, caplog: pytest.LogCaptureFixture
) -> None:
    update = tg.user_inline_query(User(904, "Late"), "13b fp16")
    tg._inline_pending.discard(update["inline_query"]["id"])  # noqa: SLF001 - Telegram forgot it
    with caplog.at_level(logging.INFO):
        await tg.wait_for(lambda c: c.method == "answerInlineQuery", timeout=10)
        await settled(bot)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert _apologies(tg) == []


async def test_a_handler_error_logs_no_user_content_above_debug(
    tg: FakeTelegram, bot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The error line names the update, its kind and a hashed user and chat; the text, the
    name and the raw ids are in the DEBUG line only (they outlived /forget in the log)."""
    import bot.commands as commands

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(commands, "card_fit", boom)
    user = User(9051234, "Zhang-Private-Name")
    with caplog.at_level(logging.DEBUG, logger="bot"):
        await say(tg, user, "/gpu 4090")
        await settled(bot)
    loud = "\n".join(
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.INFO and r.name.startswith("bot")
    )
    assert "handler failed for update" in loud
    for private in ("/gpu 4090", "Zhang-Private-Name", str(user.id)):
        assert private not in loud
    quiet = "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    assert "/gpu 4090" in quiet and "Zhang-Private-Name" in quiet
