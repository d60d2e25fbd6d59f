"""Cards and counts: "2x3090", "两张3090", "单卡A6000", "v100 32g", "4卡", "3090或4090".
Names resolve through the catalog (gpus.toml) and vocab/cards.toml (card_names.py); a
laptop part in laptops.py, a memory size alone ("我只有 12g 显存") in vram.py."""

from __future__ import annotations

import re
from functools import cache
from typing import cast

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.parse import vocab
from advisor.parse.card_names import (
    EDGE,
    accept_card,
    accept_memory_only,
    card_patterns,
    count_number,
    find_card,
    resolve_card,
    set_card,
    set_count,
    set_memory_only,
)
from advisor.parse.laptops import laptop_card, laptop_ids, one_per_laptop
from advisor.parse.scan import Reading, Scan


@cache
def _owns() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("words")["owns_card"]["words"]))


def recognize_cards(s: Scan, r: Reading) -> None:
    """A named card, with its count before or after it, else a count alone."""
    r.owns_card = r.owns_card or bool(_owns().search(s.text))  # read, not consumed
    p = card_patterns()
    if machine := s.take(_unknown_machines()):
        r.unknown_machine = machine.group(0).strip()
    laptops = laptop_card(s, r)
    card_end = None if laptops else _named_card(s, r, p)
    _other_cards(s, r)  # before the counts below: "两张3090还是一张4090" keeps its "一张"
    if r.gpu_id is None and r.gpu_count is None:
        _count_times_memory(s, r)
    named_count = r.gpu_count
    if m := (
        s.take(p["count_only"])
        or s.take(p["count_words_only"])
        or (r.gpu_count is None and s.take(p["count_before_memory"]))
    ):
        # "on two Nvidia 3090s … OOM error with one GPU" (meta-llama/llama #55, 2026-12-01):
        # the count written with the card is the machine; a bare "one GPU" after it is what
        # ran. One written before it stays an alternative read first ("两卡或者三卡3090").
        if named_count is None or card_end is None or m.start() < card_end:
            set_count(r, count_number(cast(str, m.group("n") or m.groupdict().get("n2"))))
    elif r.gpu_count is None and s.take(p["many"]):
        r.assumed.append("multi_gpu = ?")
    if r.gpu_count is None and s.take(p["ask_count"]):
        r.ask_count = True
    if laptops or r.gpu_id in laptop_ids():  # "2 gpus on gpu:rtx-4090-laptop" too
        one_per_laptop(r, laptops or 1)


_EXPLICIT_COUNTED = re.compile(r"(?:\b(?P<n>\d{1,2})x\s*)?\bgpu:(?P<id>[a-z0-9.\-]+)")
MAX_OTHER_CARDS = 3  # "3090、4090、A6000 还是 A100": a few alternatives, not a catalog


def _other_cards(s: Scan, r: Reading) -> None:
    """ "3090或4090", "a100 vs h100", "两张3090还是一张4090": cards named after the first are
    alternatives; each is answered on its own line (before, the second was listed as not
    understood and the answer covered only the first). Only cards named by name (a bare
    memory size stays the VRAM recognizer's)."""
    if r.gpu_id is None:
        return
    for _ in range(MAX_OTHER_CARDS):
        other = Reading()
        m, gpu = s.take_if(_EXPLICIT_COUNTED, lambda m: catalog.gpus().get(m.group("id")))
        if gpu is not None and m is not None:  # the canonical line's "or 2x gpu:rtx-4090"
            other.gpu_id, other.gpu_count = gpu.id, int(m.group("n")) if m.group("n") else None
        elif find_card(s, other, accept_card, set_card) is None or other.gpu_id is None:
            return
        known = [g for g, _ in r.other_cards]
        if other.gpu_id != r.gpu_id and other.gpu_id not in known:
            r.other_cards.append((other.gpu_id, other.gpu_count))


@cache
def _unknown_machines() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("cards")["unknown_machines"]["names"]))


@cache
def _times_memory() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = vocab.load("cards")["vram"]
    not_before = vocab.alternation(words["not_before"])
    pattern = re.compile(
        rf"{EDGE}(?P<n>\d{{1,2}})\s*[x*]\s*(?P<gb>\d{{2,3}})\s*g(?:b|ib)?(?![a-z0-9])"
        rf"(?!\s*(?:的\s*)?{not_before})"
    )
    negated = re.compile(vocab.alternation(words["not_owned_before"]) + r"\s*$")
    return pattern, negated


def _count_times_memory(s: Scan, r: Reading) -> None:
    """ "4X40G的卡", "8*80G", "2x24GB GPUs": so many cards of that memory, no card named
    (Qwen3-VL #261, 2026-12-01). One said not to be owned ("手里没有4X80G的卡") is read and
    set aside, not taken for the cards used."""
    pattern, negated = _times_memory()
    for m in list(pattern.finditer(s.text)):  # consuming blanks a span, positions stay
        s._consume(m)
        if negated.search(s.text[max(0, m.start() - 12) : m.start()]):
            continue
        gib = float(m.group("gb"))
        if gib > vocab.load("cards")["machines"]["max_card_gb"]:
            continue  # "2x256G": host memory, not a card's
        set_count(r, int(m.group("n")))
        r.vram_gib = gib
        return


@cache
def _glued() -> re.Pattern[str]:
    table = vocab.load("cards")["glued_memory"]
    names = "|".join(sorted(map(re.escape, table), key=len, reverse=True))
    sizes = "|".join(sorted({str(gb) for v in table.values() for gb in v}, key=len, reverse=True))
    return re.compile(
        rf"{EDGE}(?P<name>{names})(?P<mem>{sizes})(?:g|gb)?(?![a-z0-9])"
        r"(?:\s*[x*]\s*(?P<n>\d{1,4})(?![\d.]))?"
    )


def _glued_card(s: Scan) -> tuple[re.Match[str] | None, tuple[GpuSpec, float | None] | None]:
    """ "A10080*8": a card glued to a memory it was sold with, and its count."""
    table = vocab.load("cards")["glued_memory"]

    def accept(m: re.Match[str]) -> tuple[GpuSpec, float | None] | None:
        if int(m.group("mem")) not in table[m.group("name").lower()]:
            return None
        spec, odd = resolve_card(m.group("name"), m.group("mem"))
        return (spec, odd) if spec is not None else None

    return s.take_if(_glued(), accept)


def _named_card(s: Scan, r: Reading, p: dict) -> int | None:
    """The card named, with its count; returns where its reading ends (None: no card)."""
    m, gpu = s.take_if(p["explicit"], lambda m: catalog.gpus().get(m.group("id")))
    if gpu and m is not None:
        r.gpu_id = gpu.id
        return m.end()
    m, glued = _glued_card(s)
    if glued and m is not None:
        set_card(r, glued)
        if m.group("n"):
            set_count(r, int(m.group("n")))
        return m.end()
    if p["machine_words"].search(s.text) and (end := _machines_card(s, r, p)) is not None:
        return end
    found_at = find_card(s, r, accept_card, set_card) or find_card(
        s, r, accept_memory_only, set_memory_only
    )
    if found_at is not None:
        _board_assumed(s, r, found_at)
    return found_at.end() if found_at else None


_BOARDS = ("-pcie", "-sxm")


_BOARD_AFTER = re.compile(r"\s*[(（]?\s*(pci-?e|sxm)\d?(?![a-z])", re.I)


def _board_assumed(s: Scan, r: Reading, m: re.Match[str]) -> None:
    """ "A100 40GB" names no board: where the catalog holds the card as both an SXM and a
    PCIe board, the one taken is said ("A100 40GB SXM4 assumed"; an FSDP run on 4x A100
    40GB was made PCIe, without NVLink, though SXM is the common 40 GB board). A board
    written after the memory ("a100 40gb pcie") picks that board."""
    gpu = catalog.gpus().get(r.gpu_id or "")
    if gpu is None or re.search(r"pci|sxm|nvl", m.group(0), re.I):
        return
    stem = next((gpu.id.removesuffix(b) for b in _BOARDS if gpu.id.endswith(b)), None)
    if stem is None or sum(f"{stem}{b}" in catalog.gpus() for b in _BOARDS) < 2:
        return
    if after := _BOARD_AFTER.match(m.string, m.end()):
        board = "-pcie" if after.group(1).lower().startswith("pci") else "-sxm"
        r.gpu_id = f"{stem}{board}"
        s.take(re.compile(re.escape(after.group(0).strip()), re.I))
        return
    r.assumed.append(f"card_board = {gpu.name}")


def _machines_card(s: Scan, r: Reading, p: dict) -> int | None:
    """Machines times cards ("2台 H100*8", "2 nodes of 8xH100", "双机16卡A800"); returns where
    the reading ends (None: none)."""
    m, found = s.take_if(p["machines"], accept_card)
    if not found:
        m, found = s.take_if(p["machines_count_first"], accept_card)
    if found and m is not None:
        set_card(r, found)
        set_count(r, count_number(m.group("m")) * count_number(m.group("n")))
        return m.end()
    if (taken := s.take_if(p["machines_cards"], accept_card))[1] and taken[0] is not None:
        set_card(r, taken[1])
        machines, n = count_number(taken[0].group("m")), count_number(taken[0].group("n"))
        # a server holds at most max_cards_per_machine cards: "2台8卡" is 8 in each,
        # "双机16卡" all 16 together
        per_machine = n <= vocab.load("cards")["machines"]["max_cards_per_machine"]
        set_count(r, machines * n if per_machine else n)
        return taken[0].end()
    return None
