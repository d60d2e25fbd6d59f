"""A copy of an update that was handled already (Telegram re-POSTs a webhook update whose
200 it lost; getUpdates brings a page again that a killed process never confirmed) is
acknowledged without a second answer and leaves no inbox row, also across a restart
(inbox_handled, migration 0005)."""

from __future__ import annotations

from pathlib import Path

from bot.runner import stop
from standin import FakeTelegram, User
from tests.conftest import halt, launch, make_settings
from tests.test_webhook import SECRET, launch_webhook, webhook_settings


def _help(update_id: int, user_id: int) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 0,
            "chat": {"id": user_id, "type": "private"},
            "from": {"id": user_id, "is_bot": False, "first_name": "R"},
            "text": "/help",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }


async def _answered(tg: FakeTelegram, user_id: int, count: int) -> None:
    await tg.wait_for(lambda c: len(tg.sent("sendMessage", user_id)) >= count, timeout=10)


async def test_a_webhook_update_posted_again_after_it_was_handled_is_answered_once(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    user_id = 811
    settings = webhook_settings(tg, tmp_path / "bot.sqlite3")
    app, server = await launch_webhook(settings)
    hook = dict(tg.webhook or {})
    tg._stop_webhook()  # noqa: SLF001 - this test posts by hand
    tg.webhook = hook
    try:
        assert await tg.post_update(_help(9001, user_id), SECRET) == 200
        await _answered(tg, user_id, 1)
        await app.update_processor.idle()  # type: ignore[attr-defined]
        await app.inbox.drain()  # type: ignore[union-attr]
        assert await tg.post_update(_help(9001, user_id), SECRET) == 200  # its 200 was lost
        # the next update of the same user runs after anything queued before it
        assert await tg.post_update(_help(9002, user_id), SECRET) == 200
        await _answered(tg, user_id, 2)
        await app.update_processor.idle()  # type: ignore[attr-defined]
        await app.inbox.drain()  # type: ignore[union-attr]
        assert await app.repo.inbox_pending() == []  # depth back to 0 (stuck at 1 before)
    finally:
        await stop(app, server=server)
    app, server = await launch_webhook(settings)
    tg._stop_webhook()  # noqa: SLF001
    tg.webhook = hook
    try:
        assert await tg.post_update(_help(9001, user_id), SECRET) == 200  # after a restart
        assert await tg.post_update(_help(9003, user_id), SECRET) == 200
        await _answered(tg, user_id, 3)
        await app.update_processor.idle()  # type: ignore[attr-defined]
        await app.inbox.drain()  # type: ignore[union-attr]
        assert await app.repo.inbox_pending() == []
    finally:
        await stop(app, server=server)
    quoted = [c.params.get("reply_parameters") for c in tg.sent("sendMessage", user_id)]
    assert len(quoted) == 3  # 9001, 9002 and 9003, each once


async def test_a_polled_page_fetched_again_after_a_restart_is_not_answered_twice(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """A process killed after handling an update but before its next getUpdates confirmed
    it: Telegram sends the update again to the next process."""
    settings = make_settings(tg, tmp_path / "bot.sqlite3")
    user = User(812, "Po")
    app = await launch(settings)
    first = tg.user_sends(user, None, "/help")
    assert first is not None
    await tg.reply_to(first)
    await app.update_processor.idle()  # type: ignore[attr-defined]
    await halt(tg, app)
    tg.updates.append(dict(first))  # never confirmed: delivered again
    app = await launch(settings)
    try:
        await tg.reply_to(tg.user_sends(user, None, "/about"))
        await app.update_processor.idle()  # type: ignore[attr-defined]
        await app.inbox.drain()  # type: ignore[union-attr]
        assert await app.repo.inbox_pending() == []
    finally:
        await halt(tg, app)
    assert len(tg.sent("sendMessage", user.id)) == 2
