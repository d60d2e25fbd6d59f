"""How each Bot API call is sent: Telegram's rate caps, and what is retried after a failure.

Rules (each pinned by a test in tests/test_faults.py):
- 429: PTB's limiter waits `retry_after` and sends again (Telegram did not act).
- 5xx or a dropped connection: sent again, up to NETWORK_RETRIES times, 0.1/0.2/0.4 s
  apart; a lost answer is worse than, rarely, a doubled one.
- Timed out: Telegram may still act on the request, and the Bot API gives no idempotency
  key to tell. A call that posts something new (sendMessage) is sent again at most ONCE
  (TIMEOUT_RETRIES), so a slow Bot API yields at most two copies, not four; calls that are
  the same when repeated (edits, answers to buttons, getters) follow the 5xx rule.
- answerCallbackQuery refused as too old (a button press replayed after a restart, or
  answered past Telegram's ~15 s window) is not an error: answering only stops the
  button's spinner, and the step the press asked for must still happen.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging

from telegram import CallbackQuery
from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.ext import AIORateLimiter

log = logging.getLogger(__name__)

NETWORK_RETRIES = 3
TIMEOUT_RETRIES = 1
# Calls whose repetition changes nothing Telegram shows (an edit to the same text is "not
# modified"; a second answer to a button is refused): safe to retry after a timeout.
REPEATABLE = frozenset(
    {
        "editMessageText",
        "editMessageReplyMarkup",
        "answerCallbackQuery",
        "deleteMessage",
        "getMe",
        "getChatMember",
        "setMyCommands",
        "deleteMyCommands",
        "getMyCommands",
        "sendChatAction",
        "deleteWebhook",
    }
)
EXPIRED_QUERY = ("query is too old", "query id is invalid")


def is_expired_query(exc: Exception) -> bool:
    return isinstance(exc, BadRequest) and any(s in str(exc).lower() for s in EXPIRED_QUERY)


class RetryingRateLimiter(AIORateLimiter):
    """PTB's limiter (Telegram's caps, 429 retried after retry_after) with the retry rules
    above. getUpdates has the updater's own retry loop and is left to it."""

    async def process_request(self, callback, args, kwargs, endpoint, data, rate_limit_args):  # noqa: ANN001, ANN201
        timeouts = 0
        for attempt in range(NETWORK_RETRIES + 1):
            try:
                return await super().process_request(
                    callback, args, kwargs, endpoint, data, rate_limit_args
                )
            except NetworkError as exc:
                if endpoint == "answerCallbackQuery" and is_expired_query(exc):
                    log.info("button answer refused as too old (a replayed press): %s", exc)
                    return False
                if isinstance(exc, BadRequest) or endpoint == "getUpdates":
                    raise
                if isinstance(exc, TimedOut) and endpoint not in REPEATABLE:
                    timeouts += 1
                    if timeouts > TIMEOUT_RETRIES:
                        raise
                if attempt == NETWORK_RETRIES:
                    raise
                log.warning(
                    "%s failed (%s); retry %d of %d", endpoint, exc, attempt + 1, NETWORK_RETRIES
                )
                await asyncio.sleep(0.1 * 2**attempt)
        raise AssertionError("unreachable")


# The answers to button presses sent during the update being handled (answer_soon), which
# bot.app's update processor awaits before the update counts as handled.
button_answers: contextvars.ContextVar[list[asyncio.Future] | None] = contextvars.ContextVar(
    "button_answers", default=None
)


async def answer_soon(query: CallbackQuery) -> None:
    """Answer a button press (it stops the button's spinner) beside the work the press asks
    for, not before it: the answer and the edit that follows travel side by side, one
    round trip to Telegram less before the user sees the result, on every press (two thirds
    of bench/load.py's updates). Inside an update handled by bot.app the answer is awaited
    before the update counts as handled (the inbox keeps it till then: a restart sends it
    again); anywhere else it is awaited here."""
    pending = button_answers.get()
    if pending is None:
        await query.answer()
        return
    pending.append(asyncio.ensure_future(query.answer()))


async def settle_answers(pending: list[asyncio.Future]) -> None:
    """Await the button answers an update sent; one that failed is logged (the limiter
    above has retried it, and an expired one returned False), never raised: the press's
    work is done and shown."""
    for result in await asyncio.gather(*pending, return_exceptions=True):
        if isinstance(result, Exception):
            log.warning("a button answer failed: %s", result)
