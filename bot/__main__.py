"""`python -m bot` runs the bot (long polling, token from `.env`);
`python -m bot --local` tries the whole conversation in a terminal, no token needed;
`python -m bot backup PATH` writes a consistent copy of the live database;
`python -m bot healthcheck` asks the running bot's /healthz (the container's health check);
`python -m bot export-measurements --out FILE` writes the "I ran it" reports as measured
cases (docs/measurements.md).
Webhook mode when WEBHOOK_URL is set; LOG_FORMAT=json for one JSON object per log line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from pydantic import ValidationError

from bot import event_loop
from bot.instance import InstanceLock
from bot.schema import StorageError, backup_database
from bot.settings import Settings, load_settings, settings_error_line
from hublookup.settings import HubSettings

# PTB, the engine and the handlers are imported in _run, after the instance lock: a second
# process on a held database then says so in well under a second, not after ~1 s of imports.

log = logging.getLogger("bot")


def setup_logging(settings: Settings, hub: HubSettings | None = None) -> None:
    """Every secret setting out of every line (bot.logs), in both formats."""
    from bot.logs import JsonFormatter, RedactingFormatter, secrets_of, use_id_key

    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=settings.log_level, format=fmt)
    secrets = secrets_of(settings, *([hub] if hub is not None else []))
    token = settings.telegram_bot_token.get_secret_value() if settings.telegram_bot_token else ""
    use_id_key(token)  # ids at INFO and above, hashed under a key the log never shows
    for handler in logging.getLogger().handlers:
        if settings.log_format == "json":
            handler.setFormatter(JsonFormatter(secrets))
        else:
            handler.setFormatter(RedactingFormatter(fmt, secrets))
    logging.getLogger("httpx").setLevel(
        logging.WARNING
    )  # one INFO line per request, URL with token
    # PTB logs a traceback for an answer that is not JSON (a wrong base URL gives an HTML
    # 404) and then raises; the raised error is what we report, in one line.
    logging.getLogger("telegram.request").setLevel(logging.CRITICAL)


def fail(line: str, settings: Settings | None = None) -> int:
    """The one error line. It goes to stderr directly, around the logging filter, so the
    token is taken out here too (an error can quote a request URL)."""
    if settings is not None:
        from bot.logs import redact, secrets_of

        line = redact(line, secrets_of(settings))
    print(f"error: {line}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bot", description="GPU advisor Telegram bot")
    ap.add_argument(
        "--local", action="store_true", help="try the bot in this terminal, no token needed"
    )
    ap.add_argument(
        "--lang", choices=("zh", "en"), help="--local: the Telegram language of the pretend user"
    )
    sub = ap.add_subparsers(dest="command")
    b = sub.add_parser("backup", help="copy the live database to PATH (SQLite online backup)")
    b.add_argument("path", type=Path)
    sub.add_parser("healthcheck", help="exit 0 if the running bot's /healthz says healthy")
    e = sub.add_parser(
        "export-measurements",
        help="write the 'I ran it' reports as measured cases (bench/accuracy.py --cases FILE)",
    )
    e.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    try:
        settings = load_settings()
        hub = HubSettings()  # the Hub lookup's own (hublookup/settings.py), checked with the rest
    except ValidationError as exc:
        return fail(settings_error_line(exc))

    if args.command == "backup":
        try:
            backup_database(settings.database_path, args.path)
        except StorageError as exc:
            return fail(str(exc))
        print(f"backed up {settings.database_path} to {args.path}")
        return 0

    if args.command == "healthcheck":
        return healthcheck(settings)

    if args.command == "export-measurements":
        return export_measurements(settings, args.out)

    setup_logging(settings, hub)
    if args.local:
        try:  # the Bot API stand-in ships with a checkout, not with the image
            from bot.local import run_local
        except ModuleNotFoundError as exc:
            if exc.name != "standin":
                raise
            return fail(
                "--local needs the Bot API stand-in: pip install -e '.[local]' in a checkout"
            )

        return asyncio.run(run_local(settings, args.lang or settings.default_language))

    if settings.telegram_bot_token is None:
        return fail(
            "TELEGRAM_BOT_TOKEN is not set (put it in .env; see .env.example), "
            "or try `python -m bot --local`"
        )
    lock = InstanceLock(settings.database_path)
    try:
        lock.acquire()  # before anything polls Telegram or reads the inbox
    except StorageError as exc:
        return fail(str(exc), settings)
    try:
        return event_loop.run(_run(settings))
    finally:
        lock.release()


def export_measurements(settings: Settings, out: Path) -> int:
    import sqlite3

    from bot.measurement_export import export_measurements as export

    if not settings.database_path.exists():
        return fail(f"no database at {settings.database_path}")
    try:
        n = export(settings.database_path, out)
    except sqlite3.Error as exc:  # an older database without the table, or not a database
        return fail(f"cannot read the reports in {settings.database_path}: {exc}")
    except OSError as exc:
        return fail(f"cannot write {out}: {exc}")
    print(f"wrote {n} measured case(s) to {out}")
    return 0


def healthcheck(settings: Settings) -> int:
    """The port is the one the same settings make the bot listen on (WEBHOOK_PORT in
    webhook mode, HEALTH_PORT in polling mode): one source for both."""
    import urllib.error
    import urllib.request

    port = settings.webhook_port if settings.webhook_url else settings.health_port
    if port is None:
        return fail("no health endpoint: set HEALTH_PORT (polling mode) or WEBHOOK_URL")
    host = "127.0.0.1" if settings.webhook_listen in ("0.0.0.0", "::") else settings.webhook_listen
    url = f"http://{host}:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=8) as response:  # noqa: S310 - local http
            print(response.read().decode())
            return 0
    except urllib.error.HTTPError as exc:  # 503: the report says what is wrong
        print(exc.read().decode())
        return 1
    except OSError as exc:
        return fail(f"cannot reach {url}: {exc}")


async def _run(settings: Settings) -> int:
    from telegram.error import Conflict, InvalidToken, NetworkError, TelegramError
    from telegram.ext import ApplicationBuilder

    from bot.app import build_application
    from bot.runner import serve
    from bot.warmup import EngineError

    assert settings.telegram_bot_token is not None
    # A relative DATABASE_PATH is relative to the working directory: say which file it is.
    log.info("database: %s", settings.database_path.resolve())
    builder = ApplicationBuilder().token(settings.telegram_bot_token.get_secret_value())
    app = build_application(builder, settings)
    stop_event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop_event.set)
    try:
        await serve(app, stop_event, settings.stop_timeout_s)
    except InvalidToken:
        return fail("Telegram rejected TELEGRAM_BOT_TOKEN (401/404): check it with @BotFather")
    except Conflict:
        return fail(
            "another process is polling Telegram with this token (409 Conflict); "
            "run one bot per token",
            settings,
        )
    except NetworkError as exc:
        where = settings.telegram_api_base_url or "https://api.telegram.org"
        return fail(f"cannot reach the Bot API at {where}: {exc}", settings)
    except (StorageError, EngineError) as exc:
        return fail(str(exc), settings)
    except TelegramError as exc:
        return fail(f"Telegram refused to start the bot: {exc}", settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
