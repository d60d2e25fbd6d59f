"""`/healthz`: what a container's health check and an operator's probe ask. Healthy means
the database takes a committed write and the Bot API answers getMe; the age of the last
handled update is reported but never fails the check (a quiet night is not an outage)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from telegram.ext import Application

PROBE_TIMEOUT_S = 3.0


async def database_writable(app: Application) -> str:
    """'ok', or why not. A write through the bot's own writer connection: a DELETE of an
    update id Telegram never uses (ids start at 1), so it commits and changes nothing."""
    try:
        await asyncio.wait_for(app.repo.inbox_delete([0]), PROBE_TIMEOUT_S)  # type: ignore[attr-defined]
    except TimeoutError:
        return f"error: no write within {PROBE_TIMEOUT_S:.0f} s"
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return f"error: {exc}"
    return "ok"


async def bot_api_reachable(app: Application) -> str:
    try:
        await asyncio.wait_for(app.bot.get_me(), PROBE_TIMEOUT_S)
    except TimeoutError:
        return f"error: no answer within {PROBE_TIMEOUT_S:.0f} s"
    except Exception as exc:  # noqa: BLE001
        return f"error: {exc.__class__.__name__}: {exc}"
    return "ok"


async def check(app: Application) -> tuple[bool, dict[str, Any]]:
    write_started = time.perf_counter()
    database, bot_api = await asyncio.gather(database_writable(app), bot_api_reachable(app))
    metrics = getattr(app, "metrics", None)
    last = metrics.last_update_at if metrics is not None else None
    if metrics is not None and database == "ok":
        metrics.db_write.labels("health_probe").observe(time.perf_counter() - write_started)
    report = {
        "database": database,
        "bot_api": bot_api,
        "last_update_age_s": None if last is None else round(time.monotonic() - last, 1),
    }
    return database == "ok" and bot_api == "ok", report
