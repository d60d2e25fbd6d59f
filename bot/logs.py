"""What the bot's logs may hold, and their format.

Redaction (docs/operations.md, tests/test_logging.py): every secret setting (each SecretStr
of the bot's and the Hub's settings: the token, the webhook secret, HF_TOKEN) is replaced
by <name> in every line, tracebacks and library lines included (PTB logs each request's
parameters at DEBUG, setWebhook's secret_token among them). User content (message text,
names, the update itself) is logged only at DEBUG; at INFO and above a user or chat is
named by `hashed_id`, a keyed hash that lets an operator follow one user through the logs
without the log naming them.

`LOG_FORMAT=json`: one JSON object per line, for log collectors. The fields a per-update
line carries (bot.metrics.observe) come through as top-level keys: update_id, chat_type,
handler, latency_ms, outcome.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
from collections.abc import Iterable

from pydantic import BaseModel, SecretStr

UPDATE_FIELDS = ("update_id", "chat_type", "handler", "latency_ms", "outcome")

_id_key = b""  # set by `use_id_key` at start-up (from the token, a secret the log never shows)


def secrets_of(*settings: BaseModel) -> dict[str, str]:
    """{value: replacement} for every SecretStr setting that is set."""
    out: dict[str, str] = {}
    for model in settings:
        for name in type(model).model_fields:
            value = getattr(model, name)
            if isinstance(value, SecretStr) and value.get_secret_value():
                out[value.get_secret_value()] = (
                    "<token>" if name == "telegram_bot_token" else f"<{name}>"
                )
    return out


def redact(text: str, secrets: dict[str, str]) -> str:
    for value in sorted(secrets, key=len, reverse=True):  # a secret inside another: longer first
        if value in text:
            text = text.replace(value, secrets[value])
    return text


def use_id_key(key: str) -> None:
    global _id_key
    _id_key = key.encode()


def hashed_id(value: int | None) -> str:
    """A user or chat id as the logs at INFO and above show it: the first 12 hex digits of
    an HMAC-SHA256 under a key the log never shows (ids are small integers: a plain hash
    would be reversed by trying them all)."""
    if value is None:
        return "-"
    return hmac.new(_id_key, str(value).encode(), hashlib.sha256).hexdigest()[:12]


class RedactingFormatter(logging.Formatter):
    """The text format, each whole line (traceback included) with the secrets taken out."""

    def __init__(self, fmt: str, secrets: dict[str, str]) -> None:
        super().__init__(fmt)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


class JsonFormatter(logging.Formatter):
    def __init__(self, secrets: dict[str, str] | Iterable[str] | str = "") -> None:
        super().__init__()
        if isinstance(secrets, str):
            secrets = {secrets: "<token>"} if secrets else {}
        elif not isinstance(secrets, dict):
            secrets = {s: "<secret>" for s in secrets if s}
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in UPDATE_FIELDS:
            if hasattr(record, name):
                entry[name] = getattr(record, name)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        line = json.dumps(entry, ensure_ascii=False, default=str)
        # the whole line, tracebacks included: an exception can quote a request URL
        return redact(line, self.secrets)
