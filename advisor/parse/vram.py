"""A memory size: a card known by its memory ("我只有 12g 显存", "16GB card"), the named
card's own memory said again, and a measurement (what a run used) read so that it is not
taken for a card."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.parse import vocab
from advisor.parse.card_names import EDGE, as_smi_shows
from advisor.parse.scan import Reading, Scan, reject


@cache
def _vram_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = vocab.load("cards")["vram"]
    size = r"(?P<gb>\d{1,3}(?:\.\d+)?)\s*(?:g|gb|gib|G)(?![a-z0-9])"
    after = re.compile(rf"{EDGE}{size}\s*(?:的)?\s*{vocab.alternation(words['after'])}")
    before = re.compile(
        rf"{vocab.alternation(words['before'])}\s*[:：=]?\s*(?:只有|才|是)?\s*{size}"
    )
    return after, before


def _not_host_memory(m: re.Match[str]) -> bool:
    """With a card named, "256G memory" is the machine's RAM ("8 * 4090,256G memory"): the
    card's own memory comes with its name; only an unambiguous VRAM word sizes it again."""
    return not re.search(r"memory|内存", m.group(0), re.I)


@cache
def _bare_size() -> re.Pattern[str]:
    not_before = vocab.alternation(vocab.load("cards")["vram"]["not_before"])
    return re.compile(
        rf"{EDGE}(?P<gb>\d{{1,3}}(?:\.\d+)?)\s*(?:gb|gib|g)(?![a-z0-9])(?!\s*{not_before})"
    )


def _take_named_card_memory(s: Scan, r: Reading) -> None:
    """ "12g 3060", "2x 3090 (48GB total)": a size that is the named card's memory, or all of
    them together, says nothing new; it is read, not ignored."""
    spec = catalog.gpus()[r.gpu_id or ""]
    total = round(spec.vram_gb) * (r.gpu_count or 1)

    def the_cards(m: re.Match[str]) -> bool:
        # "L40S，45G显存" (ms-swift #1225, 2026-12-01): the card's memory, in GiB
        gib = float(m.group("gb"))
        return as_smi_shows(spec, gib) or round(gib) == total

    s.take_if(_size_word(), the_cards)


@cache
def _size_word() -> re.Pattern[str]:
    """A memory size with its VRAM word, if any ("45G显存"), or bare ("24g")."""
    after = vocab.alternation(vocab.load("cards")["vram"]["after"])
    return re.compile(rf"{_bare_size().pattern}(?:\s*{after})?")


_MEMORY_SIZE = re.compile(r"\d\s*[gm]")


@cache
def _measured() -> re.Pattern[str]:
    words = vocab.load("cards")["vram"]
    size = r"\d{1,4}(?:\.\d+)?\s*(?:g|gb|gib|m|mb|mib)(?![a-z0-9])"
    before = vocab.alternation(words["measured_before"] + words["required_before"])
    after = vocab.alternation(words["measured_after"])
    # "1m上下文" is a million-token context, not "about 1 MB" (上下 "about"; 上下文 "context")
    return re.compile(rf"{before}\s*(?:了)?\s*{size}|{EDGE}{size}\s*{after}(?!文)")


def recognize_vram(s: Scan, r: Reading) -> None:
    """A bare memory size: a card with that much memory ("我只有 12g 显存", "16GB card"); a
    size alone too when no card is named ("exl2 3.5bpw 24GB"), unless it is RAM or disk, or a
    measurement (what a run used, an approximate figure: vocab/cards.toml measured_*)."""
    if _MEMORY_SIZE.search(s.text):  # what every measurement holds; most lines have none
        s.take_all(_measured())
    if r.gpu_id is not None:
        _take_named_card_memory(s, r)
    patterns = [*_vram_patterns(), *([_bare_size()] if r.gpu_id is None else [])]
    for pattern in patterns:
        accept = _not_host_memory if r.gpu_id is not None else bool
        if m := s.take_if(pattern, accept)[0]:
            gib = float(m.group("gb"))
            if not 1 <= gib <= 2048:
                raise reject("bad_value", "vram")
            r.vram_gib = gib
            return
