"""Update order (`PerUserUpdateProcessor`): one member's updates run one at a time and in
arrival order, different members' concurrently, each update once (copies of a replayed or
re-fetched update are dropped). `bot.app.build_application` installs it."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from bot.delivery import button_answers, settle_answers
from bot.inbox import TAKEN_LIMIT
from bot.metrics import Metrics, observe

# Updates in progress at once. The work is mostly CPU (the engine, rendering), so more at
# once only delays every answer; enough are needed to keep sends to Telegram overlapping.
# After a restart the whole replayed backlog arrives at once: with 256 in progress, no
# answer left before all were computed (bench/durability.py timeline); 32 sends steadily.
MAX_CONCURRENT_UPDATES = 32


# PTB's own bound on updates in progress, left wide (PerUserUpdateProcessor holds its own
# slots, after the user's turn): above any backlog the inbox can replay at once.
PTB_SLOTS = 1_000_000


def _discard(coroutine: Awaitable[Any]) -> None:
    """Close an update's coroutine that will not run (PTB passes a coroutine), so Python
    does not warn that it was never awaited."""
    if isinstance(coroutine, Coroutine):
        coroutine.close()


class _Turn:
    """One user's place in line: the FIFO lock, and how many of their updates hold it or
    wait for it (the entry is dropped when that reaches 0, never while one waits)."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


def _user_key(update: object) -> int:
    """Whose turn an update takes: its sender, else its chat (a channel post, a message
    without a sender), else one shared line."""
    if not isinstance(update, Update):
        return 0
    user, chat = update.effective_user, update.effective_chat
    return user.id if user else (chat.id if chat else 0)


class PerUserUpdateProcessor(BaseUpdateProcessor):
    """Updates of one user run one at a time and in order (what ConversationHandler needs:
    PTB's docs ask for no concurrency because a conversation's steps must not overlap);
    different users run concurrently, so one member waiting on Telegram does not hold up
    the whole lab. Tasks start in arrival order and take their user's turn (a FIFO lock)
    before anything else can suspend them, so order holds, replays included. A user's turn
    is kept while any update of theirs holds or awaits it: a released asyncio.Lock reads as
    unlocked before its next waiter runs, so "unlocked" cannot say it is unused."""

    def __init__(self, max_concurrent_updates: int = 256) -> None:
        # PTB's `process_update` (final: subclasses implement `do_process_update`) holds a
        # slot of PTB's semaphore around the whole update. Here the slot must come after the
        # user's turn, or one member's queued updates would hold the slots other members
        # need; so PTB's bound is left wide and the slots are this class's own.
        super().__init__(PTB_SLOTS)
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._turns: dict[int, _Turn] = {}
        self.on_done: Callable[[object], Awaitable[None]] | None = None  # the inbox
        self.metrics: Metrics | None = None  # counts and logs each update (bot.metrics)
        self._tasks: set[asyncio.Task] = set()
        self._abandoning = False
        # After a crash the inbox replays what the dead process fetched, and getUpdates
        # brings the same updates again (it never confirmed them): run each id once.
        self._taken: set[int] = set()
        self._taken_order: deque[int] = deque()

    def _first_time(self, update: object) -> bool:
        if not isinstance(update, Update):
            return True
        if update.update_id in self._taken:
            return False
        self._take(update.update_id)
        return True

    def _take(self, update_id: int) -> None:
        self._taken.add(update_id)
        self._taken_order.append(update_id)
        if len(self._taken_order) > TAKEN_LIMIT:
            self._taken.discard(self._taken_order.popleft())

    def already_handled(self, update_ids: list[int]) -> None:
        """Ids an earlier run finished (bot.inbox.Inbox.replay, at start): copies of them
        are dropped like copies of this run's."""
        for update_id in sorted(update_ids)[-TAKEN_LIMIT:]:
            if update_id not in self._taken:
                self._take(update_id)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        # stopping past its deadline (the inbox keeps it for the next start), or a copy
        if self._abandoning or not self._first_time(update):
            _discard(coroutine)
            return
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        key = _user_key(update)
        turn = self._turns.get(key)
        if turn is None:
            turn = self._turns[key] = _Turn()
        turn.users += 1
        try:
            # the user's turn before a slot of MAX_CONCURRENT_UPDATES: one user's queued
            # updates wait without taking the slots other users need
            async with turn.lock, self._slots:
                await self._handle(update, coroutine)
        finally:
            _discard(coroutine)  # cancelled while waiting: never started, never warned about
            turn.users -= 1
            if turn.users == 0:
                del self._turns[key]
            self._tasks.discard(task)

    @property
    def busy(self) -> bool:
        """Whether an update is in progress (`python -m bot --local` waits for a chart)."""
        return bool(self._tasks)

    async def idle(self) -> None:
        """Return once no update is in progress: an answer's reply goes out while its
        history row is written (bot.answer.reply_with_answer), and the update ends after.
        Errors are the updates' own (PTB's error handlers saw them)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def abandon(self) -> int:
        """Cancel every update still in progress and refuse new ones (shutdown deadline).
        Their inbox rows stay, so the next start handles them again. Returns how many."""
        self._abandoning = True
        for task in self._tasks:
            task.cancel()
        return len(self._tasks)

    async def _handle(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Runs inside the update's user turn and one of the slots (do_process_update)."""

        async def handle() -> None:
            answers: list[asyncio.Future] = []  # bot.delivery.answer_soon
            token = button_answers.set(answers)
            try:
                try:
                    await coroutine
                except BaseException:
                    for answer in answers:
                        answer.cancel()
                    raise
                finally:
                    button_answers.reset(token)
                if answers:
                    await settle_answers(answers)
            finally:
                # Each answer's task copied this update's context, which holds this list,
                # which holds the task: a reference cycle per button press, with everything
                # the task held, that only the cyclic collector freed.
                answers.clear()
            if self.on_done is not None:
                await self.on_done(update)

        if self.metrics is None:
            await handle()
        else:
            await observe(self.metrics, update, handle)

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None
