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
    r|<hid>                   answer: "I ran it", ask what the job used (bot.measured)
    m|<row>|<a e r d>         /lab: add (row 0), edit or remove a machine row, or delete the
                              group's machines (d, row 0); admins only, checked on each press
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

MAX_BYTES = 64
_PATTERN = re.compile(r"^([wachlfmr])\|(-?\d{1,15})((?:\|[\w.\-]{1,24}){0,3})$")


class Callback(NamedTuple):
    kind: str
    id: int  # user id (w, l, f), history id (a, c, h, r) or machine row (m)
    args: tuple[str, ...]


def pack(kind: str, ident: int, *args: object) -> str:
    parts = tuple(str(a) for a in args)
    data = "|".join([kind, str(ident), *parts])
    if (
        type(ident) is not int
        or not -_MAX_IDENT < ident < _MAX_IDENT
        or not _shape_ok(kind, parts)
        or len(data.encode()) > MAX_BYTES
    ):
        raise ValueError(f"bad callback data {data!r}")
    return data


_MAX_IDENT = 10**15  # the pattern's 1-15 digits


# The pattern checked once per kind and arguments, the id apart: a keyboard packs the same
# few dozen buttons for every user (a wizard page: 12-16), and matching each whole payload
# was ~1% of the bot's CPU in bench/load.py.
@functools.lru_cache(maxsize=4096)
def _shape_ok(kind: str, parts: tuple[str, ...]) -> bool:
    return len(kind) == 1 and _PATTERN.match("|".join([kind, "0", *parts])) is not None


def unpack(data: str | None) -> Callback | None:
    """The parsed button, or None for anything we did not make (edited or forged payloads)."""
    if not data or len(data.encode()) > MAX_BYTES:
        return None
    m = _PATTERN.match(data)
    if not m:
        return None
    args = tuple(a for a in m.group(3).split("|") if a)
    return Callback(m.group(1), int(m.group(2)), args)
