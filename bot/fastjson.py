"""JSON on the bot's hot path: orjson (a dependency), the standard library for what orjson
refuses.

Why: every getUpdates answer is parsed for the inbox and every update in it written back as
text (bot.inbox, bot.storage); the standard library's encoder and decoder were ~2% of the
bot's CPU in the load bench, orjson several times faster on the same data. orjson refuses
some JSON Telegram may send (a lone surrogate escape, integers past 64 bits): those are read
and written by the standard library, as PTB itself would.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(payload: bytes | str) -> Any:
    """ValueError for anything that is not JSON the bot can hold, nesting past orjson's
    1024 levels included (the standard library then ran out of stack: RecursionError, a
    500 with a traceback for a webhook POST nested 100,000 deep)."""
    try:
        return orjson.loads(payload)
    except ValueError:
        try:
            return json.loads(payload)
        except RecursionError as exc:
            raise ValueError("JSON nested too deep") from exc


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """JSON text that `json.loads` reads back as `value`. orjson writes UTF-8 (not ASCII
    escapes): the same value, read back the same; what it refuses (a lone surrogate, an
    integer past 64 bits, a key that is not a string) is written as ASCII JSON by the
    standard library. `sort_keys`: equal values give equal text (bot.persistence compares
    it to skip unchanged writes)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, sort_keys=sort_keys)
