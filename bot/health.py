"""`/healthz`: what a container's health check and an operator's probe ask, answered from
the bot's own state, never with a Bot API call per request (20 probing clients made 432
getMe/s before, and raised everyone's latency).

- database: a committed write through the bot's own writer connection, at most one per
  DB_PROBE_REUSE_S (concurrent requests share the one in flight, later ones reuse its
  result for that long).
- bot_api: from the Bot API requests the bot makes anyway (bot.metrics.MeteredRequest):
  "error" when its latest request got no answer (or a 5xx) and none answered since; in
  polling mode also when no request was answered for BOT_API_QUIET_S (getUpdates is
  answered at least every poll timeout, 10 s). In webhook mode a quiet bot makes no
  requests: silence is not an outage there, the last failure is.
- the ages of the last handled update, the last Bot API answer and (webhook mode) the last
  webhook delivery are reported and never fail the check (a quiet night is not an outage).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from telegram.ext import Application

PROBE_TIMEOUT_S = 3.0
DB_PROBE_REUSE_S = 5.0
BOT_API_QUIET_S = 60.0


def _age(at: float | None, now: float) -> float | None:
    return None if at is None else round(now - at, 1)


class DatabaseProbe:
    """One committed write at a time, its result reused for DB_PROBE_REUSE_S."""

    def __init__(self) -> None:
        self._running: asyncio.Future[str] | None = None
        self._result: tuple[float, str] | None = None

    async def status(self, app: Application) -> str:
        now = time.monotonic()
        if self._result is not None and now - self._result[0] < DB_PROBE_REUSE_S:
            return self._result[1]
        if self._running is None:
            self._running = asyncio.ensure_future(self._probe(app))
        running = self._running
        try:
            return await asyncio.shield(running)
        finally:
            if running.done() and self._running is running:
                self._running = None

    async def _probe(self, app: Application) -> str:
        started = time.perf_counter()
        result = await database_writable(app)
        self._result = (time.monotonic(), result)
        metrics = getattr(app, "metrics", None)
        if metrics is not None and result == "ok":
            metrics.db_write.labels("health_probe").observe(time.perf_counter() - started)
        return result


async def database_writable(app: Application) -> str:
    """'ok', or why not. A write through the bot's own writer connection that commits and
    changes nothing (bot.storage.Repository.probe_write)."""
    try:
        await asyncio.wait_for(app.repo.probe_write(), PROBE_TIMEOUT_S)  # type: ignore[attr-defined]
    except TimeoutError:
        return f"error: no write within {PROBE_TIMEOUT_S:.0f} s"
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return f"error: {exc}"
    return "ok"


def bot_api_state(metrics: Any, polling: bool, now: float) -> str:
    answered, failed = metrics.bot_api_answered_at, metrics.bot_api_failed_at
    if failed is not None and (answered is None or failed > answered):
        return f"error: {metrics.bot_api_failure or 'no answer'}"
    if answered is None:
        return "error: no answer from the Bot API yet"
    if polling and now - answered > BOT_API_QUIET_S:
        return f"error: no answer from the Bot API for {now - answered:.0f} s"
    return "ok"


async def check(app: Application, *, polling: bool) -> tuple[bool, dict[str, Any]]:
    probe = getattr(app, "database_probe", None)
    if probe is None:
        probe = app.database_probe = DatabaseProbe()  # type: ignore[attr-defined]
    database = await probe.status(app)
    metrics = getattr(app, "metrics", None)
    now = time.monotonic()
    if metrics is None:
        return database == "ok", {"database": database}
    bot_api = bot_api_state(metrics, polling, now)
    report: dict[str, Any] = {
        "database": database,
        "bot_api": bot_api,
        "last_update_age_s": _age(metrics.last_update_at, now),
        "last_bot_api_answer_age_s": _age(metrics.bot_api_answered_at, now),
    }
    if not polling:
        report["last_webhook_delivery_age_s"] = _age(metrics.webhook_delivered_at, now)
    return database == "ok" and bot_api == "ok", report
