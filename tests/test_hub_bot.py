"""End to end: the real bot, the Bot API stand-in and the stand-in Hub (issue 15)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.settings import Settings
from bot.standin import Call, FakeTelegram, User
from hublookup.standin import HubStandin
from tests.conftest import halt, launch, shown

TINY = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"


async def say(tg: FakeTelegram, user: User, text: str, timeout: float = 15) -> Call:
    return await tg.reply_to(tg.user_sends(user, None, text), timeout=timeout)


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
        assert TINY in text and "1.100B parameters from the safetensors headers" in text
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


async def test_gated_repo_with_the_token_is_answered(
    tg: FakeTelegram, settings: Settings, hub: HubStandin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", hub.token)
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1), "google/gemma-2-2b-jpn-it"))
        assert "Architecture from the Hugging Face Hub" in text
    finally:
        await halt(tg, app)


async def test_missing_repo_gets_suggestions(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        text = shown(await say(tg, User(1), "HuggingFaceTB/SmolLM-999M"))
        assert "There is no model" in text and "HuggingFaceTB/SmolLM-135M" in text
    finally:
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
