"""What Telegram and the network do wrong: every answer still arrives, exactly once."""

from __future__ import annotations

import asyncio
import random
import sqlite3

from telegram.error import BadRequest, NetworkError, TimedOut

from bot.delivery import RetryingRateLimiter
from standin import Chat, FakeTelegram, FaultPlan, User
from tests.conftest import button, buttons, press, say, settled, shown


def successful(tg: FakeTelegram, method: str, chat_id: int) -> list:
    return [c for c in tg.sent(method, chat_id) if c.error is None]


async def test_a_5xx_on_send_is_retried_and_the_answer_arrives_once(tg: FakeTelegram, bot) -> None:
    tg.fail_next("sendMessage", 500, count=2)
    reply = await say(tg, User(5001, "Bo", "en"), "/vram 7b")
    assert "VRAM per card" in shown(reply)
    await settled(bot)  # the handler is done: no further send can follow
    assert [c.error for c in tg.sent("sendMessage", 5001)] == ["injected 500", "injected 500", None]


async def test_a_dropped_connection_on_an_edit_is_retried(tg: FakeTelegram, bot) -> None:
    ann = User(5002, "Ann", "en")
    menu = await say(tg, ann, "/start")
    tg.fail_next("editMessageText", drop=True)
    step = await press(tg, ann, menu, "Run an LLM")
    assert "Step 1/5" in shown(step)
    assert [c.error for c in tg.sent("editMessageText", 5002)] == ["dropped", None]


async def test_a_slow_answer_is_waited_for(tg: FakeTelegram, bot) -> None:
    tg.fail_next("sendMessage", 0, delay_s=0.5)
    reply = await say(tg, User(5003, "Bo", "en"), "/vram 7b")
    assert "VRAM per card" in shown(reply) and len(successful(tg, "sendMessage", 5003)) == 1


async def test_get_updates_failures_only_delay_polling(tg: FakeTelegram, bot) -> None:
    tg.fail_next("getUpdates", 502)
    tg.fail_next("getUpdates", drop=True)
    update = tg.user_sends(User(5004, "Bo", "en"), text="/vram 7b")
    reply = await tg.reply_to(update, timeout=20)  # waits out the updater's back-off
    assert "VRAM per card" in shown(reply)
    assert tg.injected == {"502": 1, "drop": 1}


async def test_random_faults_lose_and_duplicate_nothing(tg: FakeTelegram, bot) -> None:
    tg.fault_plan = FaultPlan(p_429=0.03, p_5xx=0.05, p_drop=0.03, p_slow=0.05, slow_s=0.2, seed=3)
    rng = random.Random(3)
    lab = Chat(-105000, "supergroup", "lab")
    expected: dict[int, int] = {}

    async def member(i: int) -> None:
        user = User(5100 + i, f"m{i}", "en")
        chat = lab if i % 3 == 0 else Chat(user.id, "private")
        suffix = "@GpuAdvisorBot" if chat.type != "private" else ""
        for _ in range(3):
            call = await say(tg, user, f"/start{suffix}", chat)
            expected[chat.id] = expected.get(chat.id, 0) + 1
            for _ in range(2):
                data = rng.choice([d for t, d in buttons(call) if "|t|" in d or "|c|" in d])
                call = await tg.reply_to(tg.user_clicks(user, call.result, data), timeout=15)
                expected[chat.id] += 1
            await say(tg, user, f"/vram{suffix} 13b fp16", chat)
            expected[chat.id] += 1

    await asyncio.gather(*(member(i) for i in range(6)))
    await settled(bot)  # every update handled: a duplicate would have been sent by now
    assert sum(tg.injected.values()) > 0
    for chat_id, n in expected.items():
        got = [
            c
            for c in tg.calls
            if str(c.params.get("chat_id")) == str(chat_id)
            and c.method in ("sendMessage", "editMessageText")
            and (c.error is None or "not modified" in c.error)
        ]
        assert len(got) == n, (chat_id, n, len(got))
    await settled(bot)
    history = 0
    for i in range(6):
        for chat_id in (lab.id, 5100 + i):
            history += len(await bot.repo.recent_history(5100 + i, chat_id, limit=100))
    assert history >= 6 * 3  # every /vram stored (wizard answers add more)


async def test_updates_not_stored_in_the_inbox_are_not_confirmed_and_come_again(
    tg: FakeTelegram, bot, monkeypatch
) -> None:
    stored = bot.repo.inbox_add
    calls: list[list[int]] = []

    async def full_disk_once(updates: list[dict]) -> None:
        calls.append([u["update_id"] for u in updates])
        if len(calls) == 1:
            raise sqlite3.OperationalError("database or disk is full")
        await stored(updates)

    monkeypatch.setattr(bot.repo, "inbox_add", full_disk_once)
    update = tg.user_sends(User(5005, "Bo", "en"), text="/vram 7b")
    reply = await tg.reply_to(update, timeout=20)  # after the updater's back-off
    assert "VRAM per card" in shown(reply)
    assert calls[:2] == [[update["update_id"]], [update["update_id"]]]  # fetched again
    await settled(bot)
    assert len(successful(tg, "sendMessage", 5005)) == 1


async def _attempts(endpoint: str, error: Exception) -> tuple[int, Exception | None]:
    limiter = RetryingRateLimiter(overall_max_rate=0, group_max_rate=0)
    attempts = 0

    async def call(*args: object, **kwargs: object) -> bool:
        nonlocal attempts
        attempts += 1
        raise error

    await limiter.initialize()
    try:
        await limiter.process_request(call, (), {}, endpoint, {"chat_id": 1}, None)
    except Exception as exc:  # noqa: BLE001 - the test reads it
        return attempts, exc
    return attempts, None


async def test_a_timed_out_send_is_sent_again_at_most_once() -> None:
    attempts, raised = await _attempts("sendMessage", TimedOut())
    assert (attempts, type(raised)) == (2, TimedOut)


async def test_a_timed_out_edit_is_retried_like_a_5xx() -> None:
    assert (await _attempts("editMessageText", TimedOut()))[0] == 4
    assert (await _attempts("sendMessage", NetworkError("Bad Gateway")))[0] == 4


async def test_an_answer_refused_as_too_old_is_not_an_error() -> None:
    too_old = BadRequest("Query is too old and response timeout expired or query id is invalid")
    assert await _attempts("answerCallbackQuery", too_old) == (1, None)
    attempts, raised = await _attempts("sendMessage", BadRequest("message text is empty"))
    assert attempts == 1 and isinstance(raised, BadRequest)


async def test_a_button_answer_travels_beside_the_edit_and_settles_before_the_update_is_done(
    tg: FakeTelegram, bot
) -> None:
    """bot.delivery.answer_soon: the answer to a press does not hold up the edit the press
    asks for (a slow answerCallbackQuery here: the edit arrives first), and the update
    leaves the inbox only once the answer is through, so a restart in between answers
    it again rather than leaving the button spinning."""
    ann = User(5006, "Ann", "en")
    menu = await say(tg, ann, "/start")
    tg.fail_next("answerCallbackQuery", 0, delay_s=0.8)
    click = tg.user_clicks(ann, menu.result, button(menu, "Run an LLM"))
    step = await tg.reply_to(click)
    assert "Step 1/5" in shown(step)
    assert tg.sent("answerCallbackQuery") == []  # still held by the slow Bot API
    pending = [u["update_id"] for u in await bot.persistence.repo.inbox_pending()]
    assert click["update_id"] in pending
    for _ in range(60):
        await asyncio.sleep(0.05)
        if click["update_id"] not in [
            u["update_id"] for u in await bot.persistence.repo.inbox_pending()
        ]:
            break
    answers = tg.sent("answerCallbackQuery")
    assert (
        len(answers) == 1
        and answers[0].params["callback_query_id"] == click["callback_query"]["id"]
    )
    assert click["update_id"] not in [
        u["update_id"] for u in await bot.persistence.repo.inbox_pending()
    ]


async def test_a_history_write_that_fails_after_the_answer_went_out_is_said_once(
    tg: FakeTelegram, bot, monkeypatch
) -> None:
    """The answer goes out while its history row is written (bot.answer.reply_with_answer).
    When that write fails, the answer already sent stays and the user is told, in their
    language, once, with no traceback; the next question is stored as usual."""
    li = User(5090, "李雷", "zh-hans")
    real = bot.repo.add_history

    async def disk_full(**kwargs: object) -> int:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(bot.repo, "add_history", disk_full)
    answer = await say(tg, li, "/vram 7b")
    assert "显存" in shown(answer)
    await settled(bot)
    sent = [shown(c) for c in successful(tg, "sendMessage", li.id)]
    assert sent[-1].startswith("抱歉") and sum(s.startswith("抱歉") for s in sent) == 1
    assert "Traceback" not in "".join(sent)
    assert await bot.repo.recent_history(li.id, li.id) == []
    monkeypatch.setattr(bot.repo, "add_history", real)
    await say(tg, li, "/vram 13b")
    await settled(bot)
    assert len(await bot.repo.recent_history(li.id, li.id)) == 1
