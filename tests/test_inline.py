"""Inline mode through the stand-in: "@Bot 13b fp16" in any chat is answered within
Telegram's limits (results, cache_time, the 64-character deep link) in both languages, and
the deep link opens the full answer in a private chat."""

from __future__ import annotations

import re

import pytest
from conftest import say, shown

from bot.inline import payload_for, question_in
from standin import Call, FakeTelegram, User

DEEP_LINK = re.compile(r"^https://t\.me/GpuAdvisorBot\?start=([A-Za-z0-9_-]{1,64})$")


async def _inline(tg: FakeTelegram, user: User, query: str) -> Call:
    update = tg.user_inline_query(user, query)
    qid = update["inline_query"]["id"]
    return await tg.wait_for(
        lambda c: c.method == "answerInlineQuery" and c.params["inline_query_id"] == qid
    )


def _link(call: Call) -> str:
    [result] = call.params["results"]
    [[url_button]] = result["reply_markup"]["inline_keyboard"]
    m = DEEP_LINK.match(url_button["url"])
    assert m, url_button["url"]
    assert call.params["button"]["start_parameter"] == m.group(1)
    return m.group(1)


@pytest.mark.parametrize(
    ("language", "query", "expected"),
    [
        ("en", "13b fp16", ["VRAM per card", "Top pick"]),
        ("zh-hans", "13b fp16", ["每卡显存约", "首选"]),
        ("en", "qwen2.5-72b int4 32k on 4090", ["Does not fit", "Top pick"]),
    ],
)
async def test_an_inline_query_gets_one_short_answer_within_telegrams_limits(
    tg: FakeTelegram, bot, language: str, query: str, expected: list[str]
) -> None:
    call = await _inline(tg, User(6101, "In", language), query)
    assert call.error is None, call.error  # the stand-in checks results, ids, HTML, payloads
    [result] = call.params["results"]
    assert result["type"] == "article" and result["title"]
    body = result["input_message_content"]["message_text"]
    assert all(word in body for word in expected), body
    assert len(body) < 1000  # short: the full answer is behind the button
    assert int(call.params["cache_time"]) == 60 and call.params["is_personal"] is True
    assert len(_link(call)) <= 64


async def test_the_deep_link_opens_the_full_answer_in_a_private_chat(tg: FakeTelegram, bot) -> None:
    user = User(6102, "Dee", "en")
    payload = _link(await _inline(tg, user, "llama-3.1-8b int4 32k"))
    full = shown(await say(tg, user, f"/start {payload}"))
    assert "Llama 3.1 8B" in full and "Recommended" in full  # the whole answer, not the wizard


async def test_a_question_too_long_for_the_link_travels_by_a_stored_key(
    tg: FakeTelegram, bot
) -> None:
    user = User(6103, "Lo", "zh-hans")
    question = "qwen2.5-14b 全参微调 adamw 序列长度 4096 批大小 8 数据 100m tokens 两张 a100"
    assert not payload_for(question)[0].startswith("q_")
    payload = _link(await _inline(tg, user, question))
    assert payload.startswith("k_") and len(payload) <= 64
    full = shown(await say(tg, user, f"/start {payload}"))
    assert "Qwen2.5 14B" in full


async def test_inline_results_are_cached_per_query_for_a_short_time(tg: FakeTelegram, bot) -> None:
    user = User(6104, "Ca", "en")
    first = await _inline(tg, user, "7b int4")
    second = await _inline(tg, user, "7B  int4")  # the same question, typed differently
    assert first.params["results"] == second.params["results"]
    assert bot.inline_cache.hits == 1
    await _inline(tg, User(6105, "Zh", "zh-hans"), "7b int4")  # another language: its own entry
    assert bot.inline_cache.hits == 1


async def test_an_empty_or_unreadable_query_offers_the_private_chat_instead(
    tg: FakeTelegram, bot
) -> None:
    user = User(6106, "Em", "en")
    empty = await _inline(tg, user, "")
    assert empty.error is None and empty.params["results"] == []
    unreadable = await _inline(tg, user, "hello there")
    assert unreadable.params["results"] == []
    payload = unreadable.params["button"]["start_parameter"]
    assert "Which model" in shown(await say(tg, user, f"/start {payload}"))


async def test_a_damaged_or_unknown_link_says_so(tg: FakeTelegram, bot) -> None:
    user = User(6107, "Da", "en")
    assert "expired" in shown(await say(tg, user, "/start k_AAAAAAAAAAAAAAAA"))
    assert "expired" in shown(await say(tg, user, "/start q_A"))  # not base64 of text


def test_payloads_carry_the_question_in_64_url_safe_characters() -> None:
    for question in ("13b fp16", "70b 半精度 推理", "sdxl 1024x1024 4 images", "x" * 47):
        payload, stored = payload_for(question)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", payload)
        if not stored:
            assert question_in(payload) == question
    assert payload_for("x" * 200)[1] is True
    assert question_in("q_%%%") is None and question_in("k_abc") is None
