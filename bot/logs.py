"""Log records as one JSON object per line (`LOG_FORMAT=json`), for log collectors.

The fields a per-update line carries (bot.metrics.observe) come through as top-level keys:
update_id, chat_type, handler, latency_ms, outcome. Message text is never one of them; the
only record that quotes an update is the error handler's, at ERROR.
"""

from __future__ import annotations

import datetime as dt
import json
import logging

UPDATE_FIELDS = ("update_id", "chat_type", "handler", "latency_ms", "outcome")


class JsonFormatter(logging.Formatter):
    def __init__(self, token: str = "") -> None:
        super().__init__()
        self.token = token

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
        return line.replace(self.token, "<token>") if self.token else line
