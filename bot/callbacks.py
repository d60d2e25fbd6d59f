"""Callback data: short, self-describing strings (Telegram allows 64 bytes).

Each button says who may press it (a user id, or a history row whose owner is known) and
what it does, so a button keeps working after a restart and a forged or stale one is
recognised and refused. Formats:

    w|<uid>|t|<task>          wizard: pick the task
    w|<uid>|c|<step>|<i>      wizard: choice i of a step
    w|<uid>|s|<step>          wizard: skip a step (its default)
    w|<uid>|b / x / k / n     wizard: back / cancel / type it (groups) / new question
    a|<hid>|<view>            answer: show a view (p precision, g card, m budget, d details, r answer)
    c|<hid>|<what>|<i>        answer: change precision (f), card (g) or budget (m) to choice i
    h|<hid>                   history: ask again
    l|<uid>|<u or g>|<lang>   language for the user or the group
    f|<uid>|<y or n>          forget: confirm or keep
    m|<row>|<a e r d>         /lab: add (row 0), edit or remove a machine row, or delete the
                              group's machines (d, row 0); admins only, checked on each press
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

MAX_BYTES = 64
_PATTERN = re.compile(r"^([wachlfm])\|(-?\d{1,15})((?:\|[\w.\-]{1,24}){0,3})$")


class Callback(NamedTuple):
    kind: str
    id: int  # user id (w, l, f), history id (a, c, h) or machine row (m)
    args: tuple[str, ...]


# Remembered: a keyboard packs the same few dozen buttons per user over and over (a wizard
# page: 12-16), and the check below (encode and the pattern) was ~1% of the bot's CPU in
# bench/load.py. The arguments are ids, step names and indexes: hashable, and the same
# arguments always pack the same (or raise again: exceptions are not cached).
@functools.lru_cache(maxsize=8192)
def pack(kind: str, ident: int, *args: object) -> str:
    data = "|".join([kind, str(ident), *(str(a) for a in args)])
    if len(data.encode()) > MAX_BYTES or unpack(data) is None:
        raise ValueError(f"bad callback data {data!r}")
    return data


def unpack(data: str | None) -> Callback | None:
    """The parsed button, or None for anything we did not make (edited or forged payloads)."""
    if not data or len(data.encode()) > MAX_BYTES:
        return None
    m = _PATTERN.match(data)
    if not m:
        return None
    args = tuple(a for a in m.group(3).split("|") if a)
    return Callback(m.group(1), int(m.group(2)), args)
