"""One /lab line → the machines it names: "node1 4x a100 40g ¥3/卡时 shared, book in the
sheet", "两台 3090 工作站", "box 3090".

Shape: [name] <card and count> [price per card-hour] [note]. The card, count and memory
variant are read by the query parser's own recognizers (cards.py), the price by its budget
reader (budget.py); this module only splits off the name before the card and the note
after it. Words are in advisor/data/vocab/machines.toml.
"""

from __future__ import annotations

import re
from functools import cache

from pydantic import BaseModel

from advisor import catalog
from advisor.parse import budget, cards, vocab, vram
from advisor.parse.scan import Reading, Rejected, Scan, normalize
from advisor.recommend.owned import MAX_CARDS_PER_MACHINE, Machine

MAX_NAME_CHARS = 32
MAX_NOTE_CHARS = 200
MAX_LINE_CHARS = 300
_SEPARATORS = " \t,，.。;；:：-–—|/()（）[]【】"


class MachineLine(BaseModel):
    """The machines of one line, or why none (error: empty | too_long | no_card |
    too_many_cards | memory_only)."""

    machines: list[Machine] = []
    error: str | None = None
    detail: str = ""


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    words = vocab.load("machines")
    per_card_hour = re.compile(
        "|".join(
            re.escape(w) for w in sorted(words["price"]["per_card_hour"], key=len, reverse=True)
        ),
        re.I,
    )
    after = re.compile(r"^\s*" + vocab.alternation(words["machine_units"]["after_card"]), re.I)
    filler = re.compile(vocab.alternation(words["filler"]["words"]), re.I)
    return per_card_hour, after, filler


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(_SEPARATORS)


def _per_hour(m: re.Match[str]) -> str:
    """A per-card-hour phrase in the form the budget reader takes at the same place:
    "每卡每小时 2 元" (the hour first), "$2 per card-hour", "3元/卡时"."""
    word = m.group(0).lower()
    if word.startswith("每"):
        return "每小时"
    return " per hour" if word.startswith(("per", "a ")) else "/h"


def _changed_span(before: str, after: str) -> tuple[int, int] | None:
    """Where a recognizer blanked text: the first and last changed position."""
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    return (changed[0], changed[-1] + 1) if changed else None


def short_card_name(gpu_id: str) -> str:
    """ "NVIDIA GeForce RTX 3090" → "RTX 3090": a default machine name."""
    name = catalog.gpus()[gpu_id].name
    return name.replace("NVIDIA ", "").replace("GeForce ", "").strip()


def _machines_of_one(r: Reading, count: int, card_text: str, unit_after: bool) -> bool:
    """Each card is a machine of its own: laptops (each a machine of one card), or a count
    of more than one whose unit names machines, in the count read with the card
    (`card_text`) or right after it (`unit_after`)."""
    return r.laptops is not None or (
        r.gpu_count is not None
        and count > 1
        and (
            any(u in card_text for u in vocab.load("machines")["machine_units"]["in_count"])
            or unit_after
        )
    )


def parse_machine_line(text: str) -> MachineLine:
    """Never raises: a line that names no known card comes back with `error`."""
    if not text or not text.strip():
        return MachineLine(error="empty")
    if len(text) > MAX_LINE_CHARS:
        return MachineLine(error="too_long", detail=str(MAX_LINE_CHARS))
    per_card_hour, machine_word, filler = _patterns()
    shown = per_card_hour.sub(_per_hour, normalize(text, split_cjk=False))
    lowered = shown.lower()
    if len(lowered) != len(shown):  # a letter whose lower case is longer: keep positions
        shown = lowered
    s, r = Scan(lowered), Reading()
    price = budget.take_budget(s)
    before_cards = s.text
    try:
        cards.recognize_cards(s, r)
    except Rejected as exc:
        return MachineLine(error=exc.error.code, detail=exc.error.detail or "")
    span = _changed_span(before_cards, s.text)
    if r.gpu_id is None or span is None:
        vram.recognize_vram(s, r)
        return MachineLine(error="memory_only" if r.vram_gib else "no_card")
    count = r.laptops or r.gpu_count or 1
    if count > MAX_CARDS_PER_MACHINE:
        return MachineLine(error="too_many_cards", detail=str(MAX_CARDS_PER_MACHINE))
    start, end = span
    rest = s.text[end:]
    unit_after = machine_word.match(rest)
    machines_of_one = _machines_of_one(r, count, lowered[start:end], unit_after is not None)
    if unit_after is not None:
        rest = " " * unit_after.end() + rest[unit_after.end() :]
    # name and note in the user's own case, from the positions left unread
    name = _clean("".join(c if s.text[i] != " " else " " for i, c in enumerate(shown[:start])))
    note_raw = "".join(shown[end + i] if ch != " " else " " for i, ch in enumerate(rest))
    note = _clean(filler.sub(" ", note_raw)) or None
    name = name[:MAX_NAME_CHARS] or short_card_name(r.gpu_id)
    per_card = price.amount if price is not None and price.per_hour else None
    common = {
        "gpu_id": r.gpu_id,
        "price_per_card_hour": per_card,
        "currency": price.currency if price is not None and per_card is not None else None,
        "note": note[:MAX_NOTE_CHARS] if note else None,
    }
    if machines_of_one:
        return MachineLine(
            machines=[Machine(name=f"{name}-{i}", count=1, **common) for i in range(1, count + 1)]
        )
    return MachineLine(machines=[Machine(name=name, count=count, **common)])
