"""At-least-once handling of updates across a crash.

PTB confirms a batch of updates to Telegram (the next getUpdates carries the new offset)
before it has handled them, so a process killed in between loses them. Each batch is
written to the `inbox` table as it arrives, before PTB sees it; an update leaves the inbox
when its handlers are done; at start-up whatever is left is handled first. Handling twice
is harmless: history rows are unique per update, wizard steps name their step.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import NetworkError
from telegram.ext import Application

from bot import fastjson
from bot.http import trim_update
from bot.persistence import SQLitePersistence

log = logging.getLogger(__name__)


class Inbox:
    def __init__(self) -> None:
        self.app: Application | None = None

    def _persistence(self) -> SQLitePersistence:
        assert self.app is not None and isinstance(self.app.persistence, SQLitePersistence)
        return self.app.persistence

    async def received(self, payload: bytes) -> None:
        """Called with the raw getUpdates answer, before PTB parses it. Returns once the
        batch is committed; PTB confirms it to Telegram (the next getUpdates' offset) only
        after that. If it cannot be stored, the getUpdates fails: the updater retries it
        with the same offset, so Telegram keeps the updates until they are on disk."""
        try:
            body = fastjson.loads(payload)
        except ValueError:
            return  # PTB reports the broken answer itself
        updates = body.get("result") if isinstance(body, dict) and body.get("ok") else None
        if updates:
            try:
                repo = await self._persistence().open()
                await repo.inbox_add(
                    [u for u in updates if isinstance(u, dict) and "update_id" in u]
                )
            except Exception as exc:
                log.error("could not record %d update(s) in the inbox: %s", len(updates), exc)
                raise NetworkError(f"updates not stored, fetched again later: {exc}") from exc

    async def done(self, update: object) -> None:
        if not isinstance(update, Update):
            return
        try:
            await self._persistence().repo.inbox_done(update.update_id)
        except Exception as exc:  # noqa: BLE001 - handled; a replay of it later is harmless
            log.warning("could not mark update %d handled: %s", update.update_id, exc)

    async def replay(self, app: Application) -> int:
        """Queue the updates a previous run received but did not finish."""
        pending = await self._persistence().repo.inbox_pending()
        for data in pending:
            # the shape a live update has (bot.http.trim_update): a handler sees one form
            await app.update_queue.put(Update.de_json(trim_update(data), app.bot))
        if pending:
            log.warning("handling %d update(s) left unfinished by the previous run", len(pending))
        return len(pending)
