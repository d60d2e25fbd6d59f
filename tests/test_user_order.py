"""One user's updates run one at a time, in arrival order (what ConversationHandler needs),
while other users are served beside them: bot.user_order.PerUserUpdateProcessor."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from standin import Chat, FakeTelegram, User
from tests.conftest import eventually, halt, launch, make_settings, settled

GROUP = Chat(id=-100777, type="supergroup", title="lab")


def _quoted(call) -> int:  # noqa: ANN001
    return int((call.params.get("reply_parameters") or {}).get("message_id", 0))


async def _answer_to(tg: FakeTelegram, message_id: int) -> None:
    await tg.wait_for(
        lambda c: c.method == "sendMessage" and c.error is None and _quoted(c) == message_id,
        timeout=20,
    )


async def test_one_users_messages_are_answered_in_order_while_sends_are_slow(
    tg: FakeTelegram, bot
) -> None:
    """Eight messages arriving one by one while every send takes a while: the answers quote
    them in the order they were sent. (The per-user lock was dropped from its dict while
    a waiter was still queued, and a later update ran beside it: 1,2,6,3,7,4,8,5.)"""
    user = User(501, "Ann")
    tg.fail_next("sendMessage", status=0, delay_s=0.25, count=8)  # slow, then answered
    sent: list[int] = []
    for k in range(8):
        if k:
            # it arrives while earlier ones wait their turn behind an answer held up at the
            # Bot API: from the fifth on, two of them wait when it comes
            stuck = max(1, k - 2)
            await eventually(lambda s=stuck: tg.injected.get("slow", 0) >= s, "a held-up send")
        update = tg.user_sends(user, GROUP, "/help")
        assert update is not None
        sent.append(update["message"]["message_id"])
    for message_id in sent:
        await _answer_to(tg, message_id)
    await settled(bot)
    answered = [_quoted(c) for c in tg.sent("sendMessage", GROUP.id) if c.error is None]
    assert answered == sent


async def test_another_user_is_answered_while_one_user_waits_on_slow_sends(
    tg: FakeTelegram, bot
) -> None:
    """A user whose answers are stuck behind a slow send does not hold up another member."""
    slow, other = User(502, "Slow"), User(503, "Quick")
    tg.fail_next("sendMessage", status=0, delay_s=3.0, count=1)
    first = tg.user_sends(slow, GROUP, "/help")
    await eventually(lambda: tg.injected.get("slow") == 1, "the first answer's send, stuck")
    second = tg.user_sends(slow, GROUP, "/about")
    quick = tg.user_sends(other, GROUP, "/help")
    reply = await tg.reply_to(quick, timeout=10)
    # the quick member was answered before the slow member's stuck send came back
    slow_calls = [
        c for c in tg.sent("sendMessage", GROUP.id) if _quoted(c) == first["message"]["message_id"]
    ]
    assert not slow_calls or slow_calls[0].seq > reply.seq
    await tg.reply_to(first, timeout=10)
    await tg.reply_to(second, timeout=10)
    await settled(bot)
    order = [_quoted(c) for c in tg.sent("sendMessage", GROUP.id) if c.error is None]
    assert order.index(first["message"]["message_id"]) < order.index(
        second["message"]["message_id"]
    )


async def test_a_replayed_backlog_and_new_messages_of_one_user_are_answered_in_order(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """After a crash the inbox replays what the dead process left; the user's new messages
    arrive while that backlog is still being answered, and queue behind it."""
    db = tmp_path / "bot.sqlite3"
    settings = make_settings(tg, db)
    user = User(504, "Bo")
    await halt(tg, await launch(settings))  # the database, migrated; then the bot is down
    backlog = [tg.user_sends(user, GROUP, "/help") for _ in range(4)]
    tg.updates.clear()  # fetched by the process that died: only its inbox has them
    con = sqlite3.connect(db)
    with con:
        con.executemany(
            "INSERT INTO inbox (update_id, data, received_at) VALUES (?, ?, '2026-01-01')",
            [
                (u["update_id"], json.dumps({k: v for k, v in u.items() if k[0] != "_"}))
                for u in backlog
            ],
        )
    con.close()
    tg.fail_next("sendMessage", status=0, delay_s=0.25, count=8)
    app = await launch(settings)
    try:
        sent = [u["message"]["message_id"] for u in backlog]
        for k in range(4):
            # while the backlog's slow answers go out one by one: the k-th is held up now
            await eventually(lambda k=k: tg.injected.get("slow", 0) >= k + 1, "a backlog send")
            update = tg.user_sends(user, GROUP, "/help")
            assert update is not None
            sent.append(update["message"]["message_id"])
        for message_id in sent:
            await _answer_to(tg, message_id)
        await settled(app)
    finally:
        await halt(tg, app)
    answered = [_quoted(c) for c in tg.sent("sendMessage", GROUP.id) if c.error is None]
    assert answered == sent
