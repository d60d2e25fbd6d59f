"""The load bench's yardstick: the least a python-telegram-bot bot can do per update on the
project's transport, so the real bot's CPU per update can be stated as a ratio to it (a
ratio holds across machines; a time does not).

What it includes: a real PTB `Application` polling getUpdates (long poll, as the bot does)
through the project's request class (`bot.http.ApiRequest`, the bot's HTTP client, for
both the getUpdates and the API session), PTB's concurrent update processing, and one handler that
answers every message with one sendMessage of the same text (no parse mode, no keyboard),
on the bot's event loop (bot.event_loop: uvloop when installed) and its JSON parser (the
request class's orjson hook).
What it leaves out, on purpose: persistence, the inbox, the rate limiter, /metrics,
language, the engine, templates and history — everything the bot's answer costs on top.

Started by `bench/load.py` (TELEGRAM_BOT_TOKEN and TELEGRAM_API_BASE_URL in the environment,
the same stand-in); stops on SIGTERM like the bot.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from telegram import Update  # noqa: E402
from telegram.ext import Application, ContextTypes, MessageHandler, filters  # noqa: E402

from bot import event_loop  # noqa: E402
from bot.http import ApiRequest  # noqa: E402

# The bot's own bound on updates in progress (bot.user_order.MAX_CONCURRENT_UPDATES): the same
# overlap of sends, so the two differ only by what each does per update.
CONCURRENT_UPDATES = 32


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    if message is not None and update.effective_chat is not None:
        await context.bot.send_message(update.effective_chat.id, message.text or "·")


async def serve() -> None:
    app = (
        Application.builder()
        .token(os.environ["TELEGRAM_BOT_TOKEN"])
        .base_url(os.environ["TELEGRAM_API_BASE_URL"])
        .request(ApiRequest())
        .get_updates_request(ApiRequest(connection_pool_size=1))
        .concurrent_updates(CONCURRENT_UPDATES)
        .build()
    )
    app.add_handler(MessageHandler(filters.ALL, echo))
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with app:  # initialize … shutdown, as bot.runner does by hand
        assert app.updater is not None
        await app.updater.start_polling(
            allowed_updates=Update.ALL_TYPES, timeout=10, poll_interval=0.0
        )
        await app.start()
        await stop.wait()
        await app.updater.stop()
        await app.stop()


def main() -> int:
    event_loop.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
