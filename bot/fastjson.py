"""JSON on the bot's hot path through orjson when installed, the standard library else.

Why: every getUpdates answer is parsed for the inbox and every update in it written back as
text (bot.inbox, bot.storage); the standard library's encoder and decoder were ~2% of the
bot's CPU in the load bench, orjson several times faster on the same data. The pure-Python
path stays the fallback (tests/test_event_loop.py runs both), and whatever orjson refuses
goes through the standard library as before.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - exercised by tests/test_event_loop.py
    orjson = None  # type: ignore[assignment]


def loads(payload: bytes | str) -> Any:
    """`json.loads`; orjson refuses what the standard library may take (a lone surrogate
    escape, NaN, integers past 64 bits): those are read as before."""
    if orjson is not None:
        try:
            return orjson.loads(payload)
        except ValueError:
            pass
    return json.loads(payload)


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """JSON text that `json.loads` reads back as `value`. orjson writes UTF-8 (not ASCII
    escapes): the same value, read back the same; what it refuses (a lone surrogate, an
    integer past 64 bits, a key that is not a string) is written as ASCII JSON by the
    standard library. `sort_keys`: equal values give equal text (bot.persistence compares
    it to skip unchanged writes), ~1 us with orjson where the standard library took ~24 us
    for a member's wizard draft."""
    if orjson is not None:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
        except TypeError:  # orjson.JSONEncodeError
            pass
    return json.dumps(value, sort_keys=sort_keys)
