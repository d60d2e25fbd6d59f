"""At-least-once handling of updates across a crash.

PTB confirms a batch of updates to Telegram (the next getUpdates carries the new offset)
before it has handled them, so a process killed in between loses them. Each batch is
written to the `inbox` table as it arrives, before PTB sees it; an update leaves the inbox
when its handlers are done; at start-up whatever is left is handled first. Handling twice
is harmless: history rows are unique per update, wizard steps name their step.
"""

from __future__ import annotations

import json
import logging

from telegram import Update
from telegram.ext import Application

from bot.persistence import SQLitePersistence

log = logging.getLogger(__name__)


class Inbox:
    def __init__(self) -> None:
        self.app: Application | None = None

    def _persistence(self) -> SQLitePersistence:
        assert self.app is not None and isinstance(self.app.persistence, SQLitePersistence)
        return self.app.persistence

    async def received(self, payload: bytes) -> None:
        """Called with the raw getUpdates answer, before PTB parses it."""
        try:
            body = json.loads(payload)
        except ValueError:
            return  # PTB reports the broken answer itself
        updates = body.get("result") if isinstance(body, dict) and body.get("ok") else None
        if updates:
            try:
                repo = await self._persistence().open()
                await repo.inbox_add(
                    [u for u in updates if isinstance(u, dict) and "update_id" in u]
                )
            except Exception:  # noqa: BLE001 - never let the safety net stop the updates
                log.exception("could not record %d update(s) in the inbox", len(updates))

    async def done(self, update: object) -> None:
        if isinstance(update, Update):
            await self._persistence().repo.inbox_done(update.update_id)

    async def replay(self, app: Application) -> int:
        """Queue the updates a previous run received but did not finish."""
        pending = await self._persistence().repo.inbox_pending()
        for data in pending:
            await app.update_queue.put(Update.de_json(data, app.bot))
        if pending:
            log.warning("handling %d update(s) left unfinished by the previous run", len(pending))
        return len(pending)
