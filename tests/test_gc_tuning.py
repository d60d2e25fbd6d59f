"""bot.gc_tuning: after start-up the collector keeps running, in larger batches, and never
walks what start-up loaded (checked in a child process: freezing pytest's own objects would
change every test after this one); the pacer's schedule; and no reference cycle per button
press for it to collect."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import weakref
from pathlib import Path

from bot.gc_tuning import Pacer

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import gc
from advisor.parse import parse_query
from bot.gc_tuning import THRESHOLDS, settle_after_start_up
parse_query("qwen2.5-7b int4 on 4090")  # start-up work: catalogs and patterns loaded
settle_after_start_up()
assert gc.isenabled()
assert gc.get_threshold() == THRESHOLDS
assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()

class Node:
    pass

# a reference cycle made after start-up is still collected
a, b = Node(), Node()
a.other, b.other = b, a
del a, b
assert gc.collect() >= 2
print("ok")
"""


def test_after_start_up_cycles_are_still_collected_and_start_up_objects_are_frozen() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_pacer_collects_young_every_n_updates_middle_every_m_and_all_at_most_so_often() -> None:
    """bot.gc_tuning.Pacer: a young collection every `young_every` updates, every
    `middle_every`-th of them a middle one, and a full one in its place once `full_every_s`
    have passed since the last (the clock starts at the pacer's creation)."""
    calls: list[int] = []
    now = [0.0]
    pacer = Pacer(
        young_every=3,
        middle_every=4,
        full_every_s=100.0,
        collect=calls.append,
        clock=lambda: now[0],
    )
    for _ in range(2):
        pacer.tick()
    assert calls == []  # two updates: nothing yet
    pacer.tick()
    assert calls == [0]
    for _ in range(9):
        pacer.tick()
    assert calls == [0, 0, 0, 1]  # the fourth paced collection is a middle one
    now[0] = 100.0
    for _ in range(12):
        pacer.tick()
    assert calls == [0, 0, 0, 1, 0, 0, 0, 2]  # 100 s on: that one is a full collection
    for _ in range(12):
        pacer.tick()
    assert calls[-1] == 1  # and the next full one waits another 100 s


async def test_a_button_answer_task_is_freed_without_the_cyclic_collector() -> None:
    """bot.app's update processor: the task answering a press (bot.delivery.answer_soon)
    copied the update's context, which held the list of answers, which held the task: a
    reference cycle per press that only the cyclic collector freed. With the collector off,
    the task must be gone once the update is done."""
    from telegram import Update

    from bot.app import PerUserUpdateProcessor
    from bot.delivery import answer_soon, button_answers

    class Query:
        async def answer(self) -> bool:
            return True

    seen: list[weakref.ref] = []

    async def handler() -> None:
        await answer_soon(Query())  # type: ignore[arg-type]
        pending = button_answers.get()
        assert pending is not None and len(pending) == 1
        seen.append(weakref.ref(pending[0]))

    processor = PerUserUpdateProcessor(4)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        await processor.do_process_update(Update(1), handler())
        await asyncio.sleep(0)  # the loop lets go of the finished task's last callback
        assert len(seen) == 1
        assert seen[0]() is None, "the answer's task outlived its update"
    finally:
        if was_enabled:
            gc.enable()


async def test_start_settles_the_collector_before_the_first_update_can_arrive(
    tg,
    settings,  # noqa: ANN001 - conftest fixtures
) -> None:
    """bot.runner.serve settles the collector (a full collection, ~35 ms) through `start`'s
    `before_updates`: after the state is loaded and before polling starts, so neither the
    first updates nor a replayed backlog wait behind it."""
    from telegram.ext import ApplicationBuilder

    from bot.app import build_application
    from bot.runner import start, stop
    from tests.conftest import TOKEN

    seen: list[list[str]] = []
    app = build_application(ApplicationBuilder().token(TOKEN), settings)
    await start(
        app, poll_timeout=1, before_updates=lambda: seen.append([c.method for c in tg.calls])
    )
    try:
        await tg.wait_polling(timeout=10)
        assert len(seen) == 1  # called once
        assert "getMe" in seen[0]  # after initialize (the token checked, state loaded)
        # before polling starts (it first deletes any webhook, then polls)
        assert "deleteWebhook" not in seen[0] and "getUpdates" not in seen[0]
        assert "deleteWebhook" in [c.method for c in tg.calls]
    finally:
        tg.release_pollers()
        await stop(app)


async def test_serve_paces_the_collector_by_updates(
    tg,
    settings,
    monkeypatch,  # noqa: ANN001 - conftest and pytest fixtures
) -> None:
    """`bot.runner.serve` (what `python -m bot` runs) hands the processor a Pacer's tick, and
    a handled update ticks it. The start-up settling (gc.freeze) is replaced here: freezing
    pytest's own objects would change every test after this one."""
    from telegram.ext import ApplicationBuilder

    from bot import gc_tuning
    from bot.app import build_application
    from bot.runner import serve
    from standin import User
    from tests.conftest import TOKEN, say

    monkeypatch.setattr(gc_tuning, "settle_after_start_up", lambda: None)
    ticks: list[int] = []
    real_tick = Pacer.tick
    monkeypatch.setattr(Pacer, "tick", lambda self: (ticks.append(1), real_tick(self))[1])
    app = build_application(ApplicationBuilder().token(TOKEN), settings)
    stop_event = asyncio.Event()
    served = asyncio.create_task(serve(app, stop_event, stop_budget_s=5))
    try:
        await tg.wait_polling(timeout=30)
        assert isinstance(app.update_processor.after_update.__self__, Pacer)
        await say(tg, User(4242, "Ann", "en"), "/help")
        await app.update_processor.idle()
        assert ticks  # the update handled ticked the pacer
    finally:
        tg.release_pollers()
        stop_event.set()
        await served
