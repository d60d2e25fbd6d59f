"""Start and stop the application by hand (not `run_polling`), so production, the local
try-out and the tests share one path, `post_init` included, and start-up failures come
back as exceptions the command line turns into one line."""

from __future__ import annotations

import asyncio
import logging

from telegram import Update
from telegram.ext import Application

log = logging.getLogger(__name__)


async def start(app: Application, *, poll_timeout: float = 10) -> None:
    await app.initialize()  # getMe (checks the token), opens the database, loads state
    try:
        if app.post_init:
            await app.post_init(app)
        assert app.updater is not None
        await app.updater.start_polling(
            allowed_updates=Update.ALL_TYPES, timeout=int(poll_timeout), poll_interval=0.0
        )
        await app.start()
    except BaseException:
        await app.shutdown()
        if app.post_shutdown:
            await app.post_shutdown(app)
        raise


async def stop(app: Application) -> None:
    if app.updater is not None and app.updater.running:
        await app.updater.stop()
    if app.running:
        await app.stop()  # writes persistence one last time
    await app.shutdown()
    if app.post_shutdown:
        await app.post_shutdown(app)


async def serve(app: Application, stop_event: asyncio.Event) -> None:
    await start(app)
    log.info("bot @%s is polling", app.bot.username)
    try:
        await stop_event.wait()
    finally:
        await stop(app)
