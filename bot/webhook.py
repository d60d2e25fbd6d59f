"""The bot's own HTTP server: Telegram's webhook POSTs, `/healthz` and `/metrics`.

Why not PTB's webhook server (`python-telegram-bot[webhooks]`, tornado): its handler puts
the update on the queue and answers 200 at once. Telegram forgets an update once it has
its 200, so a crash right after would lose it. Here the update is committed to the inbox
first, and only then answered; on a failed write Telegram gets a 500 and sends it again.
The inbox, the replay at start-up and the per-user processor are the polling path's own.
aiohttp is already a dependency (the HTTP client and the stand-in).
"""

from __future__ import annotations

import hmac
import logging
import time

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST
from telegram import Update
from telegram.ext import Application

from bot import fastjson
from bot.health import check

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class OpsServer:
    def __init__(self, app: Application, host: str, port: int, webhook: bool) -> None:
        self.app = app
        self.host, self.port = host, port
        self.settings = app.settings  # type: ignore[attr-defined]
        self.webhook = webhook
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        web_app = web.Application()
        if self.webhook:
            web_app.router.add_post(self.settings.webhook_path, self._update)
        web_app.router.add_get("/healthz", self._health)
        web_app.router.add_get("/metrics", self._metrics)
        # a POST stuck on a hung database must not hold the stop past its budget
        self._runner = web.AppRunner(
            web_app, access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        if self.port == 0:  # tests ask for any free port: the one the system gave
            self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _refuse(self, status: int, reason: str) -> web.Response:
        metrics = getattr(self.app, "metrics", None)
        if metrics is not None:
            metrics.webhook_refused.labels(reason).inc()
        return web.Response(status=status, text=reason)

    async def _update(self, request: web.Request) -> web.Response:
        secret = self.settings.webhook_secret.get_secret_value()
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), secret.encode()):
            log.warning("webhook: a request without the right secret token refused")
            return self._refuse(403, "secret")
        try:
            data = fastjson.loads(await request.read())
        except ValueError:
            return self._refuse(400, "json")
        if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
            return self._refuse(400, "update")
        try:
            # parsed before it is stored: a row the replay cannot parse would stop start-up
            update = Update.de_json(data, self.app.bot)
        except Exception:  # noqa: BLE001 - PTB raises various errors on a malformed update
            return self._refuse(400, "update")
        repo = self.app.persistence.repo  # type: ignore[union-attr]
        metrics = getattr(self.app, "metrics", None)
        started = time.perf_counter()
        try:
            # A copy of an update being handled or handled already (Telegram sends an update
            # again when its 200 was lost): acknowledged, not answered a second time, and no
            # inbox row left behind, also after a restart (inbox_handled, migration 0005)
            if await repo.inbox_known(data["update_id"]):
                if metrics is not None:
                    metrics.webhook_delivered()
                return web.Response(text="ok")
            await repo.inbox_add([data])  # committed before Telegram gets its 200
        except Exception as exc:  # noqa: BLE001 - Telegram sends it again after a 500
            log.error("webhook: update %s not stored: %s", data["update_id"], exc)
            return self._refuse(500, "storage")
        if metrics is not None:
            metrics.db_write.labels("inbox").observe(time.perf_counter() - started)
            metrics.webhook_delivered()
        await self.app.update_queue.put(update)
        return web.Response(text="ok")

    async def _health(self, request: web.Request) -> web.Response:
        healthy, report = await check(self.app, polling=not self.webhook)
        return web.json_response(report, status=200 if healthy else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        metrics = getattr(self.app, "metrics", None)
        if metrics is None:
            return web.Response(status=404)
        try:
            repo = self.app.persistence.repo  # type: ignore[union-attr]
            metrics.inbox_depth.set(len(await repo.inbox_pending()))
        except Exception as exc:  # noqa: BLE001 - the other counters are still worth serving
            log.warning("metrics: inbox depth unknown: %s", exc)
        return web.Response(body=metrics.render(), headers={"Content-Type": CONTENT_TYPE_LATEST})
