"""A new answer is computed on the engine thread (bot.engine_thread): while it computes,
the event loop answers other members; a remembered answer is served without a handoff."""

from __future__ import annotations

import asyncio
import threading

import pytest
from conftest import say, shown

from bot import answer
from bot.app import AdvisorApplication
from bot.standin import FakeTelegram, User


async def test_the_loop_answers_others_while_a_new_answer_computes(
    tg: FakeTelegram, bot: AdvisorApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    returned = threading.Event()
    real = answer.compute

    def slow_compute(*args: object, **kwargs: object) -> object:
        release.wait(timeout=5)  # without the thread this holds the whole loop
        try:
            return real(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            returned.set()

    monkeypatch.setattr(answer, "compute", slow_compute)
    ann, bob = User(4101, "Ann", "en"), User(4102, "Bob", "en")
    asking = asyncio.ensure_future(say(tg, ann, "/vram qwen2.5-7b fp16"))
    try:
        await asyncio.sleep(0.2)  # Ann's question is in the engine by now
        help_reply = await say(tg, bob, "/help")
        assert not returned.is_set(), "Bob was answered only after Ann's answer was computed"
        assert "/vram" in shown(help_reply)
    finally:
        release.set()
    assert "GB" in shown(await asyncio.wait_for(asking, 10))


async def test_a_remembered_answer_does_not_go_to_the_thread(
    tg: FakeTelegram, bot: AdvisorApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann = User(4103, "Ann", "en")
    first = await say(tg, ann, "/vram qwen2.5-7b fp16")
    handoffs: list[object] = []
    real_run = answer.engine_thread.run

    async def counting(fn: object, *args: object) -> object:
        handoffs.append(fn)
        return await real_run(fn, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(answer.engine_thread, "run", counting)
    again = await say(tg, ann, "/vram qwen2.5-7b fp16")
    assert shown(again) == shown(first)
    assert handoffs == []
