"""Inline mode through the stand-in: "@Bot 13b fp16" in any chat is answered within
Telegram's limits (results, cache_time, the 64-character deep link) in both languages, and
the deep link opens the full answer in a private chat."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from bot.inline import InlineCache, payload_for, question_in
from bot.inline_links import PendingLinks
from standin import Call, FakeTelegram, User
from tests.conftest import press, say, settled, shown

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
    answer = await say(tg, user, f"/start {payload}")
    full = shown(answer)
    # the answer (not the wizard), its parts behind its buttons
    assert "Llama 3.1 8B" in full and "VRAM per card" in full
    assert "Recommended" in shown(await press(tg, user, answer, "All picks"))


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
    assert bot.made(InlineCache).hits == 1
    await _inline(tg, User(6105, "Zh", "zh-hans"), "7b int4")  # another language: its own entry
    assert bot.made(InlineCache).hits == 1


async def test_an_empty_or_unreadable_query_offers_the_private_chat_instead(
    tg: FakeTelegram, bot
) -> None:
    user = User(6106, "Em", "en")
    empty = await _inline(tg, user, "")
    assert empty.error is None and empty.params["results"] == []
    unreadable = await _inline(tg, user, "lora fine-tune")
    assert unreadable.params["results"] == []
    payload = unreadable.params["button"]["start_parameter"]
    assert "Which model" in shown(await say(tg, user, f"/start {payload}"))
    # small talk: nothing to share; the private chat greets and offers example questions
    hello = await _inline(tg, user, "hello there")
    assert hello.params["results"] == []
    payload = hello.params["button"]["start_parameter"]
    assert "Hi!" in shown(await say(tg, user, f"/start {payload}"))


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


# --- the questions behind long links: owned, forgotten, aged out, not stored per keystroke ---

LONG = "qwen2.5-14b 全参微调 adamw 序列长度 4096 批大小 8 数据 100m tokens 两张 a100"


def _link_rows(db: Path, user_id: int | None = None) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        sql = "SELECT * FROM inline_links"
        return (
            con.execute(sql + " WHERE user_id = ?", (user_id,)).fetchall()
            if user_id
            else (con.execute(sql).fetchall())
        )
    finally:
        con.close()


async def _written(bot) -> None:  # noqa: ANN001
    """Every inline question typed so far is on disk (what shutdown, or a pause in typing,
    does; bot.inline_links)."""
    await settled(bot)
    links = bot.made(PendingLinks)
    if links is not None:
        await links.flush()


async def test_a_long_question_typed_key_by_key_stores_one_row(
    tg: FakeTelegram, bot, settings
) -> None:
    """Telegram sends an inline query per keystroke: 71 characters typed one at a time were
    21 stored rows (one per prefix too long for the link); now the question asked is one."""
    user = User(6110, "Ty", "en")
    question = "llama-3.1-70b qlora fine-tune seq 8192 batch 4 on two rtx 4090 cards ok"
    long_prefixes = [
        question[:n] for n in range(1, len(question) + 1) if payload_for(question[:n])[1]
    ]
    assert len(long_prefixes) > 15
    for n in range(1, len(question) + 1):
        await _inline(tg, user, question[:n])
    await _written(bot)
    rows = _link_rows(settings.database_path, user.id)
    assert [r[2] for r in rows] == [question.strip()]
    payload = _link(await _inline(tg, user, question))
    assert "70B" in shown(await say(tg, user, f"/start {payload}"))


async def test_forget_deletes_the_users_inline_questions_and_no_one_elses(
    tg: FakeTelegram, bot, settings
) -> None:
    ann, bo = User(6111, "Ann", "en"), User(6112, "Bo", "en")
    payload = _link(await _inline(tg, ann, LONG))
    assert _link(await _inline(tg, bo, LONG)) == payload  # Bo's own copy of the same question
    await _written(bot)
    assert len(_link_rows(settings.database_path, ann.id)) == 1
    confirm = await say(tg, ann, "/forget")
    await press(tg, ann, confirm, "Yes, delete")
    await settled(bot)
    assert _link_rows(settings.database_path, ann.id) == []
    assert len(_link_rows(settings.database_path, bo.id)) == 1
    # the link Bo posted still opens the answer; nothing of Ann's text is left
    assert "Qwen2.5 14B" in shown(await say(tg, bo, f"/start {payload}"))
    assert all(r[1] != ann.id for r in _link_rows(settings.database_path))


async def test_forget_also_drops_a_question_typed_moments_before(
    tg: FakeTelegram, bot, settings
) -> None:
    """A question still in memory (typed in the last seconds) is not written after /forget."""
    ann = User(6113, "Ann", "en")
    confirm = await say(tg, ann, "/forget")
    await _inline(tg, ann, LONG)
    await press(tg, ann, confirm, "Yes, delete")
    await _written(bot)
    assert _link_rows(settings.database_path, ann.id) == []


async def test_the_retention_job_purges_old_inline_questions(
    tg: FakeTelegram, bot, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot import lab_store
    from bot.app import purge_old_history
    from bot.context import Context

    user = User(6114, "Old", "en")
    with monkeypatch.context() as m:
        m.setattr(lab_store, "now_iso", lambda: "2000-01-01T00:00:00+00:00")  # typed long ago
        await _inline(tg, user, LONG)
        await _written(bot)
    assert len(_link_rows(settings.database_path, user.id)) == 1
    await purge_old_history(Context(bot))  # as the job queue calls it
    assert _link_rows(settings.database_path) == []
