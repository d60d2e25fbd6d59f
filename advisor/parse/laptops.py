"""Laptop GPUs: "3060 laptop", "笔记本 4060" are the laptop part's memory, not the desktop
card's; and a laptop has one GPU ("2x 4090 laptop" is two laptops)."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.parse import vocab
from advisor.parse.card_names import (
    EDGE,
    count_number,
    count_word,
    set_card,
    set_memory_only,
    sibling_with_memory,
)
from advisor.parse.scan import Reading, Scan

_LAPTOP = r"(?:laptop|notebook|mobile|移动版|笔记本版|笔记本电脑|笔记本)"
# "2x 4090 laptop", "2台笔记本 4060", "两台 4060 笔记本": two laptops, one GPU each
_LAPTOPS = r"(?:(?P<laptops>\d{{1,2}}|{words})\s*[x×*台张]\s*)?"
_LAPTOP_CARD = (
    # its memory may come first: "a 6gb rtx 3050 laptop"
    r"(?:(?P<mem_before>\d{1,2})\s*g(?:b|ib)?\s+)?"
    r"(?:nvidia\s*|geforce\s*|rtx\s*)*(?P<name>[2-5]0[5-9]0(?:\s?ti)?)"
    r"(?:\s*(?P<mem>\d{1,2})\s*g(?:b|ib)?(?![a-z0-9]))?"
)


@cache
def _laptop_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    laptops = _LAPTOPS.format(words=count_word())
    after = re.compile(
        rf"{EDGE}{laptops}{_LAPTOP_CARD}\s*(?:gpu\s*)?{_LAPTOP}(?:\s*gpu)?"
        # its memory after the laptop word: "rtx 3050 laptop 6g"
        r"(?:\s*(?P<mem_after>\d{1,2})\s*g(?:b|ib)?(?![a-z0-9]))?",
        re.I,
    )
    before = re.compile(
        rf"{laptops}{_LAPTOP}\s*(?:gpu|上的?|的|是|用)?\s*{EDGE}{_LAPTOP_CARD}", re.I
    )
    return after, before


# The laptop word both laptop patterns hold: tested first, as their card names are tried at
# every position and few lines say laptop.
_LAPTOP_WORD = re.compile(_LAPTOP, re.I)


def laptop_card(s: Scan, r: Reading) -> int | None:
    """ "3060 laptop", "笔记本 4060": the laptop part's memory, not the desktop card's.
    Returns how many laptops were written with it ("2x 4090 laptop": 2; else 1), None when
    no laptop card was read."""
    if not _LAPTOP_WORD.search(s.text):
        return None
    table = vocab.squashed("cards", "laptop")
    for pattern in _laptop_patterns():
        m, card = s.take_if(pattern, lambda m: table.get(vocab.squash(m.group("name"))))
        if not card:
            continue
        assert m is not None  # a card is read only from a match
        laptops = count_number(m.group("laptops")) if m.group("laptops") else 1
        if card.get("id") in catalog.gpus():
            mem = _memory(m, card)
            spec = catalog.gpus()[card["id"]]
            board = sibling_with_memory(spec, int(mem)) if mem and int(mem) != card["gb"] else None
            odd = float(mem) if mem and int(mem) != card["gb"] and board is None else None
            set_card(r, (board or spec, odd))
            return laptops
        mem = _memory(m, card)
        set_memory_only(r, (card["name"], float(mem or card["gb"])))
        return laptops
    return None


def _memory(m: re.Match[str], card: dict) -> str | None:
    """The memory written with a laptop card: after its name or the laptop word; before the
    name ("a 6gb rtx 3050 laptop") only where it is a board of that part in the catalog
    ("我的笔记本 32g 4060" is the laptop's RAM, never a 32 GB card)."""
    mem = m.group("mem") or m.groupdict().get("mem_after")
    before = m.group("mem_before")
    if mem or not before:
        return mem
    spec = catalog.gpus().get(card.get("id", ""))
    is_board = int(before) == card["gb"] or (
        spec is not None and sibling_with_memory(spec, int(before)) is not None
    )
    return before if is_board else None


@cache
def laptop_ids() -> frozenset[str]:
    """The catalog ids of laptop parts (vocab cards.toml [laptop] `id`)."""
    return frozenset(c["id"] for c in vocab.load("cards")["laptop"].values() if "id" in c)


def one_per_laptop(r: Reading, laptops: int) -> None:
    """A laptop has one GPU: "2x 4090 laptop" or "两张 4090 笔记本" is two laptops, whose
    memory does not add up (no split over cards between them). Judged for one, and said so
    (before, "2x" was dropped unread in English and "两张" read as two cards in one box)."""
    count = max(laptops, r.gpu_count or 1)
    if count > 1:
        r.gpu_count, r.laptops = None, count
        r.assumed.append(f"laptops = {count}")
