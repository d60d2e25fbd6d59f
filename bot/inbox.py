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
from bot.group_commit import GroupCommit
from bot.persistence import SQLitePersistence

# update ids the processor remembers against a second copy (several getUpdates pages)
TAKEN_LIMIT = 10_000

log = logging.getLogger(__name__)


class Inbox:
    def __init__(self) -> None:
        self.app: Application | None = None
        # handled updates' writes, shared: PTB's persistence flush, then the inbox delete
        self._finished: GroupCommit[int] = GroupCommit(self._write_finished)

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
        """A handled update leaves the inbox once what it changed is on disk: its user's and
        chat's data and its conversation step (PTB marked them when its handlers ended),
        then its row, in that order, so a crash in between replays it rather than losing a
        step. The update does not wait for that write: its reply is out, and holding it
        (its per-user lock, one of MAX_CONCURRENT_UPDATES slots) only made the updates
        behind it wait. The writes of the updates finished meanwhile go together
        (bot.group_commit); `drain` at shutdown waits for the last of them."""
        if isinstance(update, Update):
            self._finished.submit(update.update_id)

    async def _write_finished(self, update_ids: list[int]) -> None:
        assert self.app is not None
        await self.app.update_persistence()  # reports its own errors (PTB's error handler)
        try:
            await self._persistence().repo.inbox_delete(update_ids)
        except Exception as exc:
            # tried again with the next flush; a replay after a crash is harmless
            log.warning("could not mark %d update(s) handled: %s", len(update_ids), exc)
            raise

    async def drain(self) -> None:
        """Wait for the handled updates' writes (before the database closes)."""
        await self._finished.drain()

    async def replay(self, app: Application) -> int:
        """Queue the updates a previous run received but did not finish. The ones it did
        finish are told to the processor first: Telegram may send them again (a getUpdates
        page the dead process never confirmed), and they are not answered twice."""
        repo = self._persistence().repo
        processor = app.update_processor
        if hasattr(processor, "already_handled"):
            processor.already_handled(await repo.inbox_handled_recent(TAKEN_LIMIT))
        await repo.purge_handled()
        pending = await repo.inbox_pending()
        for data in pending:
            await app.update_queue.put(Update.de_json(data, app.bot))
        if pending:
            log.warning("handling %d update(s) left unfinished by the previous run", len(pending))
        return len(pending)
