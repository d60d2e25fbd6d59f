"""Counters an operator scrapes from `/metrics` (Prometheus text format, `prometheus-client`)
and the one log line per handled update.

One registry per application, not the library's global one: tests and the local try-out
build several applications in one process, and each must count only its own traffic.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from telegram import Update

from advisor import memo
from bot.delivery import RetryingRateLimiter
from bot.http import TrimmingRequest

log = logging.getLogger("bot.updates")

# Seconds from an update's arrival in the process to its handlers being done. Buckets
# around the load bench's figures (p50 tens of ms, p99 under a second on a laptop).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
DB_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.updates = Counter(
            "bot_updates", "Updates handled, by type and outcome", ["type", "outcome"], registry=r
        )
        self.latency = Histogram(
            "bot_update_seconds",
            "Time from receiving an update to its handlers being done",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.api_errors = Counter(
            "bot_api_errors",
            "Bot API answers other than 200, by HTTP status ('network': no answer)",
            ["code"],
            registry=r,
        )
        self.retries = Counter(
            "bot_api_retries", "Bot API requests sent again (429, network)", registry=r
        )
        self.inbox_depth = Gauge(
            "bot_inbox_depth", "Updates received and not yet handled (inbox rows)", registry=r
        )
        self.db_write = Histogram(
            "bot_db_write_seconds",
            "Database write latency, by what was written",
            ["what"],
            buckets=DB_BUCKETS,
            registry=r,
        )
        self.webhook_refused = Counter(
            "bot_webhook_refused",
            "Webhook requests refused, by reason",
            ["reason"],
            registry=r,
        )
        # monotonic time of the last update handled (the health check reports its age)
        self.last_update_at: float | None = None
        # what /healthz answers from, without asking Telegram (bot.health): the last
        # answer the Bot API gave (any HTTP answer: it is reachable), the last request it
        # did not answer (or answered 5xx) and why, the last webhook POST taken
        self.bot_api_answered_at: float | None = None
        self.bot_api_failed_at: float | None = None
        self.bot_api_failure: str = ""
        self.webhook_delivered_at: float | None = None
        r.register(MemoCollector())

    def bot_api_answered(self) -> None:
        self.bot_api_answered_at = time.monotonic()

    def bot_api_failed(self, why: str) -> None:
        self.bot_api_failed_at, self.bot_api_failure = time.monotonic(), why

    def webhook_delivered(self) -> None:
        self.webhook_delivered_at = time.monotonic()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MemoCollector:
    """The engine's memos (advisor.memo) as read at scrape time: entries, hits and misses
    per memo. Read when scraped, so answering an update costs nothing more; a hit rate that
    falls tells the operator a memo is too small for the traffic (bench/load.py prints it)."""

    def collect(self) -> list:
        entries = GaugeMetricFamily("bot_memo_entries", "Entries held, by memo", labels=["memo"])
        hits = CounterMetricFamily("bot_memo_hits", "Lookups answered from a memo", labels=["memo"])
        misses = CounterMetricFamily(
            "bot_memo_misses", "Lookups computed and remembered", labels=["memo"]
        )
        for name, (n, hit, miss) in sorted(memo.stats().items()):
            entries.add_metric([name], n)
            hits.add_metric([name], hit)
            misses.add_metric([name], miss)
        return [entries, hits, misses]


# --- one update: outcome set by the error handler, read by the processor -------------------


@dataclass
class UpdateRun:
    outcome: str = "ok"


current_run: contextvars.ContextVar[UpdateRun | None] = contextvars.ContextVar(
    "current_run", default=None
)


def mark_failed() -> None:
    """Called by the error handler: the update being handled ended in an error. PTB awaits
    error handlers inside the update's own task, so the context variable is the update's."""
    run = current_run.get()
    if run is not None:
        run.outcome = "error"


def update_type(update: object) -> str:
    if not isinstance(update, Update):
        return "other"
    for kind in ("message", "edited_message", "callback_query", "my_chat_member"):
        if getattr(update, kind, None) is not None:
            return kind
    return "other"


def route(update: object) -> str:
    """The handler an update goes to, named by what selects it: the command word, the
    button's payload prefix, or 'text'/'media'. Never the message text itself."""
    if not isinstance(update, Update):
        return "other"
    if update.callback_query is not None:
        data = update.callback_query.data or ""
        return "button:" + data.split(":", 1)[0][:16]
    msg = update.effective_message
    if msg is None:
        return update_type(update)
    text = msg.text or ""
    if text.startswith("/"):
        word = text.split(maxsplit=1)[0].split("@", 1)[0]
        return word[:32] if word[1:].isidentifier() else "command"
    return "text" if msg.text else "media"


async def observe(metrics: Metrics, update: object, handle: Callable[[], Awaitable[None]]) -> None:
    """Run `handle` (the update's handlers), then count it and log one line about it."""
    run = UpdateRun()
    token = current_run.set(run)
    started = time.perf_counter()
    try:
        await handle()
    except BaseException:
        run.outcome = "cancelled"  # stopping past its deadline; it stays in the inbox
        raise
    finally:
        current_run.reset(token)
        elapsed = time.perf_counter() - started
        kind = update_type(update)
        metrics.updates.labels(kind, run.outcome).inc()
        metrics.latency.observe(elapsed)
        metrics.last_update_at = time.monotonic()
        if log.isEnabledFor(logging.INFO):  # the line's fields are built only when written
            _log_update(update, run.outcome, elapsed)


def _log_update(update: object, outcome: str, elapsed: float) -> None:
    chat = update.effective_chat if isinstance(update, Update) else None
    handler = route(update)
    log.info(
        "update %s %s %s in %.0f ms",
        getattr(update, "update_id", None),
        handler,
        outcome,
        elapsed * 1000,
        extra={
            "update_id": getattr(update, "update_id", None),
            "chat_type": chat.type if chat else None,
            "handler": handler,
            "latency_ms": round(elapsed * 1000, 1),
            "outcome": outcome,
        },
    )


# --- the Bot API side ----------------------------------------------------------------------


class MeteredRequest(TrimmingRequest):
    """Counts every answer that is not 200 by its status, and requests with no answer."""

    def __init__(self, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.metrics = metrics

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        try:
            status, body = await super().do_request(*args, **kwargs)
        except Exception as exc:
            self.metrics.api_errors.labels("network").inc()
            self.metrics.bot_api_failed(f"{type(exc).__name__}: {exc}")
            raise
        if status != 200:
            self.metrics.api_errors.labels(str(status)).inc()
        if status >= 500:
            self.metrics.bot_api_failed(f"HTTP {status}")
        else:  # 4xx too: Telegram answered (a blocked user, a message not modified)
            self.metrics.bot_api_answered()
        return status, body


class MeteredRateLimiter(RetryingRateLimiter):
    """Counts retries: every call of a request's callback after its first is one (PTB's
    limiter repeats it after a 429, `RetryingRateLimiter` after a network error)."""

    def __init__(self, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.metrics = metrics

    async def process_request(self, callback, args, kwargs, endpoint, data, rate_limit_args):  # noqa: ANN001, ANN201
        calls = 0

        async def counted(*a: Any, **kw: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls > 1:
                self.metrics.retries.inc()
            return await callback(*a, **kw)

        return await super().process_request(counted, args, kwargs, endpoint, data, rate_limit_args)
