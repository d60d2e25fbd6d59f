"""Webhook mode: after setWebhook, updates are POSTed to the bot as Telegram does, each sent
again until it is answered 200, and getUpdates is refused. Methods of `FakeTelegram` (its
state lives there), kept apart by what they do."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp


class WebhookDelivery:
    def _set_webhook(self, p: dict) -> None:
        url = str(p.get("url") or "")
        if not url:
            self._stop_webhook()
            return
        if p.get("drop_pending_updates") in (True, "true", "True"):
            self.updates.clear()
        self._stop_webhook()
        self.webhook = {
            "url": url,
            "secret_token": p.get("secret_token"),
            "max_connections": int(p.get("max_connections") or 40),
        }
        self._deliverer = asyncio.ensure_future(self._deliver_loop())

    def _stop_webhook(self) -> None:
        self.webhook = None
        if self._deliverer is not None:
            self._deliverer.cancel()
            self._deliverer = None

    async def post_update(self, update: dict, secret: str | None) -> int:
        """POST one update to the webhook as Telegram would, with `secret` in the header
        (None: no header, as from a stranger who found the URL). Returns the HTTP status."""
        assert self.webhook is not None, "no webhook set"
        headers = {} if secret is None else {"X-Telegram-Bot-Api-Secret-Token": secret}
        body = {k: v for k, v in update.items() if not k.startswith("_")}
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(
                self.webhook["url"], json=body, headers=headers, timeout=aiohttp.ClientTimeout(10)
            ) as response:
                await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError):
            status = 0  # no answer: the bot is down
        self.webhook_answers.append(status)
        return status

    async def _deliver_loop(self) -> None:
        """Every pending update is POSTed, up to max_connections at once; it leaves the
        queue only on a 200 answer, else it is sent again (Telegram's retries)."""
        assert self.webhook is not None
        slots = asyncio.Semaphore(self.webhook["max_connections"])
        while self.webhook is not None:
            self._new_update.clear()
            for update in list(self.updates):
                if update["update_id"] in self._in_flight:
                    continue
                await slots.acquire()
                self._in_flight.add(update["update_id"])
                task = asyncio.ensure_future(self._deliver_one(update, slots))
                self._deliveries.add(task)
                task.add_done_callback(self._deliveries.discard)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_update.wait(), 0.2)

    async def _deliver_one(self, update: dict, slots: asyncio.Semaphore) -> None:
        try:
            secret = self.webhook["secret_token"] if self.webhook else None
            if await self.post_update(update, secret) == 200 and update in self.updates:
                self.updates.remove(update)
                self._new_update.set()  # a slot is free
        finally:
            self._in_flight.discard(update["update_id"])
            slots.release()
