"""/metrics: what an operator scrapes, counted from real traffic."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.context import AdvisorApplication
from checks import load
from standin import FakeTelegram, User
from tests.conftest import say


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_api_errors_retries_and_updates_are_counted(
    tg: FakeTelegram, bot: AdvisorApplication
) -> None:
    tg.fail_next("sendMessage", 502, "Bad Gateway")
    tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=0)
    await say(tg, User(601), "/help")
    await say(tg, User(602), "/vram 7b")
    ok = ("bot_updates_total", (("outcome", "ok"), ("type", "message")))
    for _ in range(100):  # the count follows the reply (the inbox row goes first)
        got = samples(bot.metrics.render().decode())
        if got.get(ok) == 2:
            break
        await asyncio.sleep(0.02)
    assert got[("bot_api_errors_total", (("code", "502"),))] == 1
    assert got[("bot_api_errors_total", (("code", "429"),))] == 1
    assert got[("bot_api_retries_total", ())] == 2
    assert got[ok] == 2
    assert got[("bot_update_seconds_count", ())] == 2
    assert got[("bot_db_write_seconds_count", (("what", "inbox"),))] >= 1


async def test_metrics_count_what_the_load_bench_sent() -> None:
    """bench/load.py in webhook mode, briefly: the bot's own /metrics (scraped by the
    bench before it stops the bot) counts exactly the updates the bench sent."""
    args = argparse.Namespace(
        users=6, duration=2.0, drain=5.0, rate=60.0, faults=False, seed=3, webhook=True
    )
    result = await load.run(args)
    assert result["updates"] > 0  # how many depends on the machine; counted, each one
    assert result["lost_replies"] == 0
    assert result["metrics_updates_counted"] == result["updates"]


def test_the_echo_yardstick_pools_its_phases_before_and_after_the_bot() -> None:
    """bench/load.py runs the echo bot half before the bot's window and half after it; the
    yardstick is their CPU over their updates together, not an average of two ratios."""
    from checks.load_users import Stats

    before = {
        "seconds": 5.0,
        "stats": Stats(latencies=[0.004] * 99 + [0.05], updates=100),
        "cpu": 0.08,
        "rss": 60.0,
        "lost": 0,
        "duplicated": 0,
        "rejected": 0,
    }
    after = {
        "seconds": 5.0,
        "stats": Stats(latencies=[0.004] * 300, updates=300),
        "cpu": 0.36,
        "rss": 61.5,
        "lost": 1,
        "duplicated": 0,
        "rejected": 0,
    }
    echo = load.echo_summary([before, after])
    assert echo["updates"] == 400 and echo["updates_per_s"] == 40.0
    assert echo["cpu_ms_per_update"] == 1.1  # 0.44 s over 400 updates
    assert echo["cpu_ms_per_update_by_phase"] == [0.8, 1.2]
    assert echo["peak_rss_mb"] == 61.5 and echo["lost_replies"] == 1


async def test_inbox_depth_is_read_at_scrape_time(tg: FakeTelegram, tmp_path: Path) -> None:
    from bot.runner import stop
    from tests.test_webhook import launch_webhook, webhook_settings

    app, server = await launch_webhook(webhook_settings(tg, tmp_path / "bot.sqlite3"))
    try:
        await app.repo.inbox_add([{"update_id": 10_001}, {"update_id": 10_002}])
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{server.port}/metrics") as response,
        ):
            assert response.status == 200
            got = samples(await response.text())
        assert got[("bot_inbox_depth", ())] == 2
    finally:
        await stop(app, server=server)
