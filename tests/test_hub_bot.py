"""End to end: the real bot, the Bot API stand-in and the stand-in Hub."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.settings import Settings
from hublookup.standin import DEFAULT_DATA, HubStandin
from standin import Call, FakeTelegram, User
from tests.conftest import answer_to, eventually, halt, launch, press, shown

TINY = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"


async def say(tg: FakeTelegram, user: User, text: str, timeout: float = 20) -> Call:
    return await answer_to(tg, tg.user_sends(user, None, text), timeout=timeout)


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HubStandin]:
    standin = HubStandin()
    await standin.start()
    monkeypatch.setenv("HF_ENDPOINT", standin.url)
    monkeypatch.setenv("HUB_TIMEOUT_S", "10")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield standin
    await standin.stop()


async def test_a_repo_the_catalog_lacks_is_answered_from_the_hub(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        call = await say(tg, User(1), f"{TINY} on a 4090")
        text = shown(call)
        assert "Architecture from the Hugging Face Hub" in text
        assert TINY in text and "1.100B parameters counted in the safetensors headers" in text
        assert "I don't know the model" not in text
    finally:
        await halt(tg, app)


async def test_cached_answer_after_restart_with_the_hub_down(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        await say(tg, User(1), "deepseek-ai/deepseek-moe-16b-base")
    finally:
        await halt(tg, app)
    await hub.stop()  # the Hub is gone; the cache in the bot's database remains
    hub.requests.clear()
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(2), "deepseek-ai/deepseek-moe-16b-base 2x4090"))
        assert "Architecture from the Hugging Face Hub" in text and "16.376B" in text
    finally:
        await halt(tg, app)
    assert not hub.requests  # answered from the cache: no request at all


async def test_stale_cache_serves_when_the_hub_is_down(
    tg: FakeTelegram, settings: Settings, hub: HubStandin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUB_CACHE_DAYS", "0")  # every entry is due for a new reading
    app = await launch(settings)
    try:
        await say(tg, User(1), TINY)
        await hub.stop()
        text = shown(await say(tg, User(1), f"{TINY} int4"))
        assert "the Hub cannot be reached now: this is the last reading" in text
    finally:
        await halt(tg, app)


async def test_hub_down_and_nothing_cached_says_so(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    await hub.stop()
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1), TINY))
        assert "cannot be reached" in text and "give the size" in text
    finally:
        await halt(tg, app)


async def test_gated_repo_without_a_token_is_explained_in_chinese(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1, language_code="zh"), "google/gemma-2-2b-jpn-it"))
        assert "受限仓库" in text and "HF_TOKEN" in text
    finally:
        await halt(tg, app)


async def test_gated_repo_with_the_token_is_answered_and_the_token_never_logged(
    tg: FakeTelegram,
    settings: Settings,
    hub: HubStandin,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("HF_TOKEN", hub.token)
    caplog.set_level(logging.DEBUG)
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1), "google/gemma-2-2b-jpn-it"))
        assert "Architecture from the Hugging Face Hub" in text
    finally:
        await halt(tg, app)
    assert caplog.records and all(hub.token not in r.getMessage() for r in caplog.records)


async def test_missing_repo_gets_suggestions(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1), "HuggingFaceTB/SmolLM-999M"))
        assert "There is no model" in text and "HuggingFaceTB/SmolLM-135M" in text
    finally:
        await halt(tg, app)


async def test_a_name_outside_the_catalog_gets_hub_repos_as_suggestions(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1), "pythia-1.4b on a 4090"))
        assert "I don't know the model" in text
        assert "EleutherAI/pythia-1.4b" in text and "EleutherAI/pythia-1.4b-deduped" in text
    finally:
        await halt(tg, app)


async def test_a_reading_that_arrives_late_answers_the_next_question(
    tg: FakeTelegram, settings: Settings, hub: HubStandin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUB_TIMEOUT_S", "0.6")
    hub.delay_s = 0.5  # two round trips: about 1 s, past the limit
    app = await launch(settings)
    try:
        placeholder = await tg.reply_to(tg.user_sends(User(3), None, TINY), timeout=10)
        assert "Looking up" in shown(placeholder)
        edited = await tg.wait_for(
            lambda c: (
                c.method == "editMessageText"
                and c.error is None
                and int(c.params["message_id"]) == placeholder.result["message_id"]
            ),
            timeout=10,
        )
        assert "did not answer in time" in edited.result["text"]
        # the lookup goes on in its thread and lands in the cache
        await eventually(
            lambda: app.repo.read_hub_facts(TINY.lower()), "the late lookup stored in the Hub cache"
        )
        hub.requests.clear()
        text = shown(await say(tg, User(3), TINY))
        assert "Architecture from the Hugging Face Hub" in text
        assert not hub.requests
    finally:
        hub.delay_s = 0
        await halt(tg, app)


async def test_slow_hub_shows_looking_up_and_serves_others_meanwhile(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    hub.delay_s = 0.8  # each request; a lookup makes several
    app = await launch(settings)
    try:
        slow = tg.user_sends(User(1), None, TINY)
        placeholder = await tg.reply_to(slow, timeout=10)
        assert "Looking up" in shown(placeholder)
        # another member asks meanwhile and is answered before the lookup ends
        other = await say(tg, User(2), "qwen2.5-7b on a 4090", timeout=5)
        assert "Qwen2.5" in shown(other) or "qwen2.5" in shown(other).lower()
        edited = await tg.wait_for(
            lambda c: (
                c.method == "editMessageText"
                and c.error is None
                and int(c.params["message_id"]) == placeholder.result["message_id"]
            ),
            timeout=20,
        )
        assert other.seq < edited.seq
        assert "Architecture from the Hugging Face Hub" in edited.result["text"]
    finally:
        hub.delay_s = 0
        await halt(tg, app)
        await asyncio.sleep(0)


async def test_answer_buttons_and_a_follow_up_keep_the_hub_model(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        user = User(7)
        answer = await say(tg, user, "EleutherAI/pythia-1.4b on a 4090")
        details = await press(tg, user, answer, "Details")
        assert "Architecture from the Hugging Face Hub" in shown(details)
        assert "Llama-like architecture" not in shown(details)
        changed = await say(tg, user, "int4")  # a follow-up: the same model, another precision
        assert "EleutherAI/pythia-1.4b" in shown(changed) and "INT4" in shown(changed).upper()
    finally:
        await halt(tg, app)


def test_chinese_hub_lines_carry_no_english_outside_the_allow_list() -> None:
    from advisor.hubspec import HubFacts, count_tensors, hub_model
    from advisor.recommend import recommend_query
    from advisor.render import render
    from hublookup.query import hub_query
    from hublookup.resolve import HubAnswer
    from tests.test_answer_chinese import leaks_in

    folder = DEFAULT_DATA / "TheBloke__Llama-2-7B-Chat-GPTQ"
    config = json.loads((folder / "config.json").read_text())
    tensors = {
        k: (v[0], v[1]) for k, v in json.loads((folder / "tensors.json").read_text()).items()
    }
    model = hub_model(
        HubFacts(
            repo_id="TheBloke/Llama-2-7B-Chat-GPTQ",
            read_at="2026-11-30T08:00:00+00:00",
            config=config,
            tensors=count_tensors(tensors),
        )
    )
    assert model is not None
    parsed = hub_query("TheBloke/Llama-2-7B-Chat-GPTQ 4090", "TheBloke/Llama-2-7B-Chat-GPTQ", model)
    rec = recommend_query(parsed, default_currency="CNY")
    texts = []
    for stale in (False, True):
        hub_answer = HubAnswer(repo_id=model.spec.id, model=model, stale=stale)
        for template in ("answer", "details"):
            texts.append(
                render(
                    template, "zh", rec=rec, parsed=parsed, canonical="", hub=hub_answer, plain=True
                )
            )
    for code in (
        "not_found",
        "gated",
        "no_config",
        "timeout",
        "rate_limited",
        "unreachable",
        "offline",
    ):
        error = HubAnswer(repo_id="org/name", error=code, suggestions=["org/other"])
        texts.append(render("hub_error", "zh", hub=error, plain=True))
    texts.append(render("hub_looking", "zh", repo_id="org/name", plain=True))
    assert "结构参数来自" in texts[0] and "GPTQ" in texts[0]
    # the same rule as every Chinese answer (settings and flags typed as they are pass),
    # with the repo ids this test made
    repo_words = {"thebloke", "llama", "chat", "gptq", "org", "name", "other", "b"}
    leaks = leaks_in([("hub", text) for text in texts], repo_words)
    assert not leaks, leaks


async def test_a_bad_hub_setting_stops_start_up_in_one_line_without_the_token(
    tmp_path: Path,
) -> None:
    from tests.test_startup import GOOD_TOKEN, run_bot

    rc, out = await run_bot(
        tmp_path,
        {
            "TELEGRAM_BOT_TOKEN": GOOD_TOKEN,
            "HUB_TIMEOUT_S": "soon",
            "HF_TOKEN": "hf_secret_value_never_printed",
        },
    )
    assert rc == 2
    assert "HUB_TIMEOUT_S" in out and "hf_secret_value_never_printed" not in out
