"""Start and stop the application by hand (not `run_polling`), so production, the local
try-out and the tests share one path, `post_init` included, and start-up failures come
back as exceptions the command line turns into one line."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from telegram import Update
from telegram.error import Conflict, TelegramError
from telegram.ext import Application

from bot.warmup import warm_engine
from bot.webhook import OpsServer

log = logging.getLogger(__name__)

# SIGTERM to exit, whatever the Bot API does meanwhile (STOP_TIMEOUT_S in the settings).
STOP_BUDGET_S = 10.0
# Kept back from the budget for what must still happen after in-flight updates are given
# up: the last persistence write, closing the HTTP sessions and the database.
STOP_RESERVE_S = 2.0


async def start(
    app: Application,
    *,
    poll_timeout: float = 10,
    on_conflict: Callable[[Conflict], None] | None = None,
    server: OpsServer | None = None,
) -> None:
    """`on_conflict`: called when Telegram answers getUpdates with 409 (another process
    polls with this token); None logs it like any polling error. `server`: the HTTP
    server; if it takes webhook POSTs, Telegram is told to send updates there instead of
    being polled."""
    try:
        settings = getattr(app, "settings", None)
        if settings is not None:
            warm_engine(settings.prices_file)  # before any update waits on a cold engine
        await app.initialize()  # getMe (checks the token), opens the database, loads state
        if app.post_init:
            await app.post_init(app)  # the inbox replay is queued here, in both modes
        if server is not None and server.webhook:
            await server.start()  # listening before Telegram is told the URL
            await app.bot.set_webhook(
                settings.webhook_url,  # type: ignore[union-attr]
                secret_token=settings.webhook_secret.get_secret_value(),  # type: ignore[union-attr]
                allowed_updates=Update.ALL_TYPES,
                # updates Telegram kept while the bot was down are wanted, not dropped
                drop_pending_updates=False,
            )
        else:
            assert app.updater is not None
            # start_polling deletes a webhook left by an earlier webhook-mode run
            await app.updater.start_polling(
                allowed_updates=Update.ALL_TYPES,
                timeout=int(poll_timeout),
                poll_interval=0.0,
                error_callback=lambda exc: _polling_error(exc, on_conflict),
            )
            if server is not None:
                await server.start()
        await app.start()
    except BaseException:
        if server is not None:
            await server.stop()
        await app.shutdown()
        # initialize() may have failed after opening its HTTP sessions (getMe refused):
        # app.shutdown() skips a half-initialized app, so close them here, or asyncio
        # prints "Unclosed client session" after the one error line.
        await app.bot.shutdown()
        if app.post_shutdown:
            await app.post_shutdown(app)
        raise


def _polling_error(exc: TelegramError, on_conflict: Callable[[Conflict], None] | None) -> None:
    if isinstance(exc, Conflict) and on_conflict is not None:
        on_conflict(exc)
        return
    log.warning("polling: %s", exc)


async def stop(
    app: Application, budget_s: float = STOP_BUDGET_S, server: OpsServer | None = None
) -> None:
    """Stop within `budget_s`: stop polling (or taking webhook POSTs), let updates in
    progress finish while the budget lasts, then cancel the rest (they stay in the inbox
    and run at the next start). The webhook stays set: Telegram keeps what arrives while
    the bot is down and sends it after the next start."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget_s - STOP_RESERVE_S
    if server is not None:
        await server.stop()
    if app.updater is not None and app.updater.running:
        try:
            # its last getUpdates confirms the fetched offset; a hung Bot API must not hold it
            await asyncio.wait_for(app.updater.stop(), max(0.1, deadline - loop.time()))
        except TimeoutError:
            log.warning("the Bot API did not answer the last getUpdates; stopping anyway")
    if app.running:
        stopping = asyncio.ensure_future(app.stop())  # waits for updates in progress
        done, _ = await asyncio.wait({stopping}, timeout=max(0.1, deadline - loop.time()))
        if not done:
            processor = app.update_processor
            abandoned = processor.abandon() if hasattr(processor, "abandon") else 0
            log.warning(
                "stopping: %d update(s) still in progress after %.0f s; left for the next start",
                abandoned,
                budget_s - STOP_RESERVE_S,
            )
        await stopping  # writes persistence one last time
    await app.shutdown()
    if app.post_shutdown:
        await app.post_shutdown(app)


async def serve(
    app: Application, stop_event: asyncio.Event, stop_budget_s: float = STOP_BUDGET_S
) -> None:
    """Run until `stop_event` is set; raises Conflict if another process polled with the
    same token (after stopping cleanly)."""
    conflicts: list[Conflict] = []

    def on_conflict(exc: Conflict) -> None:
        if not conflicts:
            log.error("409 Conflict: another process is polling with this token; stopping")
        conflicts.append(exc)
        stop_event.set()

    server = ops_server(app)
    await start(app, on_conflict=on_conflict, server=server)
    if server is not None and server.webhook:
        log.info(
            "bot @%s takes updates by webhook on %s:%d", app.bot.username, server.host, server.port
        )
    else:
        log.info("bot @%s is polling", app.bot.username)
    try:
        await stop_event.wait()
    finally:
        await stop(app, stop_budget_s, server=server)
    if conflicts:
        raise conflicts[0]


def ops_server(app: Application) -> OpsServer | None:
    """Webhook mode when WEBHOOK_URL is set (health and metrics on the same port); in
    polling mode an HTTP server only when HEALTH_PORT is set."""
    settings = getattr(app, "settings", None)
    if settings is None:
        return None
    if settings.webhook_url:
        return OpsServer(app, settings.webhook_listen, settings.webhook_port, webhook=True)
    if settings.health_port:
        return OpsServer(app, settings.webhook_listen, settings.health_port, webhook=False)
    return None
