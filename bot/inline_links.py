"""The questions behind long inline deep links ("k_…"), written once per question asked,
not once per keystroke.

Telegram sends an inline query for every character typed ("@Bot qwen2.5-14b 全参…"), and
each long one needs its question stored before anyone can press its link. Which result the
user finally sends is only reported with inline feedback (BotFather's /setinlinefeedback,
off by default), so the bot cannot wait for that. Instead each user has one pending
question in memory: a new keystroke replaces it, and it is written once the user has
stopped typing for SETTLE_S (or at once when the next query is a different question, not
the same one typed on, and at shutdown). A link pressed meanwhile is answered from memory.
A 71-character question typed key by key is one row, not 21 (tests/test_inline.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from bot.lab_store import LabStore

log = logging.getLogger(__name__)

SETTLE_S = 2.0  # Telegram's clients send a query per keystroke; a pause this long ends one


@dataclass(slots=True)
class _Pending:
    key: str
    query: str
    timer: asyncio.TimerHandle | None = None


class PendingLinks:
    def __init__(self, store: LabStore) -> None:
        self._store = store
        self._pending: dict[int, _Pending] = {}
        self._writes: set[asyncio.Task] = set()

    def note(self, user_id: int, key: str, query: str) -> None:
        """The user's current inline question needs a stored link (it is too long to
        carry in the payload)."""
        old = self._pending.get(user_id)
        if old is not None:
            if old.timer is not None:
                old.timer.cancel()
            typing_on = query.startswith(old.query) or old.query.startswith(query)
            if not typing_on:  # another question: the one before may have been sent
                self._write(user_id, old)
        entry = _Pending(key, query)
        entry.timer = asyncio.get_running_loop().call_later(SETTLE_S, self._settled, user_id)
        self._pending[user_id] = entry

    def query(self, key: str) -> str | None:
        """A pending question with this key (pressed before it was written)."""
        return next((p.query for p in self._pending.values() if p.key == key), None)

    def forget(self, user_id: int) -> None:
        """/forget: the pending question goes too (its written rows go with forget_user)."""
        entry = self._pending.pop(user_id, None)
        if entry is not None and entry.timer is not None:
            entry.timer.cancel()

    async def flush(self) -> None:
        """Write every pending question and wait for the writes (at shutdown)."""
        for user_id in list(self._pending):
            self._settled(user_id)
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

    def _settled(self, user_id: int) -> None:
        entry = self._pending.pop(user_id, None)
        if entry is not None:
            if entry.timer is not None:
                entry.timer.cancel()
            self._write(user_id, entry)

    def _write(self, user_id: int, entry: _Pending) -> None:
        task = asyncio.ensure_future(self._save(user_id, entry))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _save(self, user_id: int, entry: _Pending) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            try:
                await self._store.save_link(entry.key, user_id, entry.query)
            except Exception as exc:  # noqa: BLE001 - the link answers "expired"; say why here
                log.warning("could not store an inline question's link: %s", exc)
