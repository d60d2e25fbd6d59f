"""Card names and counts as people write them ("2x3090", "两张3090", "v100 32g", "4卡"): the
shape of a card token, the count words, and a name resolved through the catalog (gpus.toml)
and vocab/cards.toml. The recognizers are in cards.py, laptops.py and vram.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan, reject

MAX_GPUS = 4096

# A card token: letters, digits and the suffixes card names carry ("rtx 4060 ti", "a100 sxm",
# "l40s", "910b", "4090d"); an optional memory variant ("32g", "16gb"). What is a card is
# decided by the catalog, not by this shape.
# Brand words written before a card's model number, typos included ("RXT 4090"): vocab data.
_BRAND = "|".join(re.escape(w) for w in vocab.load("cards")["brands"]["words"])
# Cards named without a model number ("TITAN RTX"): vocab data
_WORDS_ONLY = "|".join(
    re.escape(w).replace(r"\ ", r"\s?")
    for w in vocab.load("cards")["brands"]["names_without_number"]
)
_CARD_TO_MEMORY = vocab.alternation(vocab.load("cards")["vram"]["card_to_memory"])
_NAME = (
    # the memory may come first: "40GA100", "一张80g的A100", "24G的4090" (LightX2V #619, InfLLM
    # #11, 2026-12-01); checked against MAX_CARD_GB in _memory_of
    r"(?:(?P<mem_before>\d{2,3})\s?g(?:b|ib)?\s*(?:的\s*)?)?"
    rf"(?:(?:{_BRAND})\s*)*"
    rf"(?P<name>{_WORDS_ONLY}|(?:pro\s?)?[a-z]{{0,5}}-?\d{{1,4}}[a-z]{{0,5}}"
    # a suffix word ("max", "pro") glued to more by "_" or "-" is a knob's name: "h200
    # max_length 8192" is an H200 and its max_length, not an unknown "h200 max"
    r"(?:[\s\-]?(?:ti|super|ada|pcie|sxm\d?|nvl|pro|max|ultra|xtx|xt|gre|s|d[\s\-]?v2|(?<=d)[\s\-]?v2|d)(?![a-z_]|-[a-z]))*)"
    # its compute written after it: Ascend 910B parts by TFLOPS ("910b280T", LLaMA-Factory #4297)
    r"(?:[\s\-]?\d{3}\s?t(?:flops)?(?![a-z0-9]))?"
    # "v100 32g", and in brackets "a100(40g)", "A10(24G)" (not "3090 (48GB total)"); "2080ti
    # 魔改22g": a rework word between the card and its memory (vocab/cards.toml)
    r"(?:[\s\-]?(?P<paren>\()?"
    rf"(?:(?:{_CARD_TO_MEMORY})\s*)?"
    r"(?P<mem>\d{1,3})\s?g(?:b|ib)?(?(paren)\))(?![a-z0-9]))?"
)
EDGE = r"(?<![a-z0-9.\-:/_])"


@cache
def count_word() -> str:
    words = vocab.load("cards")["count_words"]
    return "(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + ")"


@cache
def _english_count_word() -> str:
    words = [w for w in vocab.load("cards")["count_words"] if w.isascii()]
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


def count_number(text: str) -> int:
    words = vocab.load("cards")["count_words"]
    return int(text) if text.isdigit() else int(words[text])


@cache
def card_patterns() -> dict[str, re.Pattern[str]]:
    units = vocab.load("cards")["units"]
    before = "(?:" + "|".join(re.escape(u) for u in units["before_card"]) + ")"
    alone = "(?:" + "|".join(re.escape(u) for u in sorted(units["alone"], key=len, reverse=True))
    alone += ")"
    n = rf"(?P<n>\d{{1,4}}|{count_word()})"
    glued = "(?:" + "|".join(map(re.escape, units["glued_counts"])) + ")"
    return {
        "explicit": re.compile(r"\bgpu:(?P<id>[a-z0-9.\-]+)"),
        "count_first": re.compile(rf"{EDGE}(?:{n}\s*{before}|(?P<n2>{glued}))\s*(?:的\s*)?{_NAME}"),
        # "two 3090s", "dual 3090", "4 RTX 3090": a count and a space, when the count is a
        # word or the card carries its brand; "is 16 H100 enough", "8 A100 80g": or the card
        # is a data-center part, a letter and its number (simplescaling/s1 #62, Megatron-LLM
        # #52, 2026-12-01), which no size or version is written as
        "count_space": re.compile(
            rf"{EDGE}(?:(?P<n>{_english_count_word()})\s+|(?P<n2>\d{{1,2}})\s+"
            rf"(?=(?:{_BRAND})|[a-z]\d{{2,3}}(?![\d.]))){_NAME}"
        ),
        # "on 2 A100", "with 4 3090s", "oom in 4 A100": an English count with no unit, after a
        # preposition
        "count_prep": re.compile(
            rf"(?<![a-z])(?:on|with|have|using|rent|got|need|in|across)\s+(?:a\s+)?"
            rf"(?P<n>\d{{1,2}}|{count_word()})\s+{_NAME}"
        ),
        "count_after": re.compile(
            # a number with a memory unit after the sign is the card's memory, not a count:
            # "7900xtx 24g" is one 7900 XTX, not 24 of a "7900xt"
            rf"{EDGE}{_NAME}\s*(?:[x*]\s*(?P<n>\d{{1,4}})(?![\d.])(?!\s?g(?:b|ib)?(?![a-z0-9]))"
            rf"|(?P<n2>\d{{1,4}}|{count_word()})"
            rf"\s*(?:张|块|卡|台)"
            # "A800 7*80g": the count times each card's memory (LLaMA-Factory #6999)
            r"|(?P<n3>\d{1,2})\s*[x*]\s*(?=(?P<mem_each>\d{2,3})\s*g(?:b|ib)?(?![a-z0-9])))"
        ),
        "alone": re.compile(rf"{EDGE}{_NAME}(?![a-z0-9.])"),
        # what the count patterns cannot match without (a preposition and a space; a count
        # and its unit; a count and a space; a count sign or unit after the card): tested
        # first, as the card name in each is tried at every position
        "count_prep_needs": re.compile(r"(?:on|with|have|using|rent|got|need|in|across)\s"),
        "count_first_needs": re.compile(rf"(?:\d|{count_word()})\s*{before}|{glued}"),
        "count_space_needs": re.compile(rf"\d\s|{_english_count_word()}\s"),
        "count_after_needs": re.compile(r"[x*]\s*\d|[张块卡台]"),
        "count_only": re.compile(
            # "x101" / "x152" (and "x101-32x4d") name ResNeXt backbones, not 101 cards (seg,
            # 2026-12-01: "cascade mask rcnn x101" was read as 101 GPUs)
            rf"{EDGE}(?P<n>\d{{1,4}}|{count_word()})\s*{alone}(?![a-z])"
            rf"|(?<![\w.])x\s?(?!(?:101|152)\b)(?P<n2>\d{{1,4}})\b(?!-)"
        ),
        # "one 24GB gpu", "a single 24gb GPU", "4张48G显卡", "3张24GB的显卡": the count, the
        # size left for recognize_vram
        "count_before_memory": re.compile(
            rf"{EDGE}(?P<n>\d{{1,2}}|{count_word()})(?:\s+|\s*(?:张|块|个)\s*)"
            r"(?=\d{1,3}\s*g(?:b|ib)?\s*(?:vram\s*)?(?:的\s*)?(?:gpus?|cards?|显卡|卡)(?![a-z]))"
        ),
        # "2台 H100*8", "2 nodes of 8xH100": machines times the cards in each
        "machines": re.compile(
            rf"{EDGE}(?P<m>\d{{1,3}}|{count_word()})\s*(?:台|nodes?\s+of|machines?\s+of)\s*"
            rf"{_NAME}\s*[x*]\s*(?P<n>\d{{1,2}})(?![\d.])"
        ),
        # "2台8卡a800", "双机16卡A800": machines, then cards (each machine's, or all of them)
        "machines_cards": re.compile(
            rf"{EDGE}(?P<m>\d{{1,3}}|{count_word()})\s*(?:台|机|nodes?)\s*(?:的\s*)?"
            rf"(?P<n>\d{{1,3}}|{count_word()})\s*(?:卡|张)\s*(?:的\s*)?{_NAME}"
        ),
        # a word each of machines, machines_cards and machines_count_first holds: tested
        # first, as their counts and card names are tried at every position and few lines
        # name machines
        "machine_words": re.compile(r"台|机|node|machine"),
        "machines_count_first": re.compile(
            rf"{EDGE}(?P<m>\d{{1,3}}|{count_word()})\s*(?:台|nodes?\s+of|machines?\s+of)\s*"
            rf"(?P<n>\d{{1,2}})\s*[x*]\s*{_NAME}"
        ),
        "many": re.compile(r"多卡|multi[\s\-]?gpu|多张卡"),
        # "两张" with no card after it: cards, unless pictures follow ("两张图"); digits
        # before 张 stay image counts ("sdxl 4张")
        "count_words_only": re.compile(rf"(?P<n>{count_word()})\s*(?:张|块)(?!图|图片|照片)"),
        "ask_count": re.compile(
            "".join(f"(?<!{re.escape(w)})" for w in vocab.load("cards")["ask_count"]["not_after"])
            + "(?:"
            + "|".join(vocab.phrase(w) for w in vocab.load("cards")["ask_count"]["words"])
            + r")(?!\s*"
            + vocab.alternation(vocab.load("cards")["ask_count"]["not_before"])
            + ")"
        ),
    }


def resolve_card(name: str, mem: str | None = None) -> tuple[GpuSpec | None, float | None]:
    """A catalog card for a spelling and optional memory variant. Returns the card and, where
    the named memory is a variant the catalog lacks ("v100 16g"), that memory in GiB."""
    key = vocab.squash(name)
    spellings = vocab.squashed("cards", "spellings")
    if mem:
        for candidate in (f"{key}{mem}g", f"{key}{mem}gb", f"{key}-{mem}gb"):
            spec = catalog.find_gpu(candidate) or _spelled(spellings, candidate)
            if spec is not None and round(spec.vram_gb) == int(mem):
                return spec, None
    spec = catalog.find_gpu(key) or _spelled(spellings, key)
    if spec is None and key.endswith("s") and (len(key) > 3 or key[-2].isdigit()):
        # "3090s", "a100s", "l4s": a plural of a card whose name ends in its number
        spec = catalog.find_gpu(key[:-1]) or _spelled(spellings, key[:-1])
    if spec is None:
        return None, None
    if mem and as_smi_shows(spec, float(mem)):
        return spec, None  # "L40(45GB)": the card's 48 GB as nvidia-smi shows it, in GiB
    if mem and round(spec.vram_gb) != int(mem):
        sibling = sibling_with_memory(spec, int(mem))
        if sibling is not None:
            return sibling, None
        return spec, float(mem)
    return spec, None


def as_smi_shows(spec: GpuSpec, gib: float) -> bool:
    """A size up to a tenth under the card's GB is the card's own memory as nvidia-smi and
    torch report it, in GiB (48 GB = 44.7 GiB; 80 GB = 74.5 GiB), not another part."""
    return 0.9 * spec.vram_gb <= gib <= spec.vram_gb + 0.5


def _spelled(spellings: dict[str, str], key: str) -> GpuSpec | None:
    gpu_id = spellings.get(key) or spellings.get(key.removeprefix("rtx"))
    return catalog.gpus()[gpu_id] if gpu_id else None


def sibling_with_memory(spec: GpuSpec, mem: int) -> GpuSpec | None:
    """rtx-3080-10gb asked as "3080 12g" -> rtx-3080-12gb: same name stem, that memory."""
    stem = re.sub(r"-\d+gb.*$", "", spec.id)
    sibling = re.compile(re.escape(stem) + r"(-\d+gb.*)?")  # not rtx-3060 -> rtx-3060-ti
    for other in catalog.gpus().values():
        if sibling.fullmatch(other.id) and round(other.vram_gb) == mem:
            return other
    return None


def _memory_of(m: re.Match[str]) -> str | None:
    """The card's memory as written after its name, or before it when it is a card's size."""
    before = m.groupdict().get("mem_before")
    if before and int(before) > vocab.load("cards")["machines"]["max_card_gb"]:
        before = None  # "256g 4090": the host's memory, not a card's
    return m.group("mem") or before or m.groupdict().get("mem_each")


# A Mac's name before a chip ("macbook air m3", "mac mini m4"): the chip is Apple's
_MAC = re.compile(r"\b(?:apple|mac|macbook)", re.I)


# A bare card number written as an image size: "2060x2060", "2060px", "分辨率 2060" (a
# card is read before a size otherwise: "sd1.5 lora训练 2060 6g" is the RTX 2060).
_SIZE_AFTER = re.compile(r"\s*(?:[x×*]\s*\d{3,4}(?!\d)|px\b)")
_SIZE_BEFORE = re.compile(r"(?:分辨率|resolution|\d{3,4}\s*[x×*])\s*[:：=]?\s*$")


def _image_size(m: re.Match[str]) -> bool:
    if not m.group("name").isdigit():
        return False
    return bool(
        _SIZE_AFTER.match(m.string, m.end("name"))
        or _SIZE_BEFORE.search(m.string[: m.start("name")])
    )


def accept_card(m: re.Match[str]) -> tuple[GpuSpec, float | None] | None:
    if _image_size(m):
        return None
    name, mem = m.group("name"), _memory_of(m)
    spec, odd_mem = resolve_card(f"apple {name}", mem) if _MAC.search(m.group(0)) else (None, None)
    if spec is None:
        spec, odd_mem = resolve_card(name, mem)
    if odd_mem is not None and not m.group("mem"):
        # a size before the name that is no variant of the card ("RAM 64g 4090") is not
        # its memory: only a size written after the name sizes an odd card ("4090 48g")
        spec, odd_mem = resolve_card(m.group("name"))
    return (spec, odd_mem) if spec is not None else None


def accept_memory_only(m: re.Match[str]) -> tuple[str, float] | None:
    """A card the catalog lacks but whose memory is known (vocab/cards.toml memory_only)."""
    table = vocab.squashed("cards", "memory_only")
    card = table.get(vocab.squash(m.group("name")))
    if card is None:
        return None
    return card["name"], float(_memory_of(m) or card["gb"])


def set_count(r: Reading, n: int) -> None:
    if not 1 <= n <= MAX_GPUS:
        raise reject("bad_value", "num_gpus")
    r.gpu_count = n


def set_card(r: Reading, found: tuple[GpuSpec, float | None]) -> None:
    spec, odd_mem = found
    r.gpu_id = spec.id
    if odd_mem is not None:
        r.vram_gib = odd_mem
        r.assumed.append(f"card_memory = {spec.name} {odd_mem:g} GB")


def set_memory_only(r: Reading, found: tuple[str, float]) -> None:
    name, gib = found
    r.vram_gib = gib
    r.assumed.append(f"card_outside = {name} {gib:g} GB")


def find_card(s: Scan, r: Reading, accept: Callable, apply: Callable) -> re.Match[str] | None:
    """The card with its count before ("两张3090", "on 2 A100") or after ("a100*8"), else
    alone; `accept` decides what is a card, `apply` records it. Returns where it was read."""
    p = card_patterns()
    for pattern in ("count_prep", "count_first", "count_space", "count_after", "alone"):
        needs = p.get(f"{pattern}_needs")
        if needs is not None and not needs.search(s.text):
            continue
        check = _count_space_accept(accept) if pattern == "count_space" else accept
        m, found = s.take_if(p[pattern], check)
        if found and m is not None:
            apply(r, found)
            n = m.groupdict().get("n") or m.groupdict().get("n2") or m.groupdict().get("n3")
            if n:
                set_count(r, count_number(n))
            return m
    return None


def _count_space_accept(accept: Callable) -> Callable:
    """ "is 16 H100", "8 A100 80g": a bare number before a data-center card is a count only
    after a word that leads to one (vocab/cards.toml count_space), the line's start or a
    sign or a size ("yi 34b 2 a100"); after another word it is that word's number ("llama 3
    A100", "sd 3 a100", "batch size 8 A100")."""

    def check(m: re.Match[str]) -> Any:
        if m.group("n2") and not re.match(
            rf"(?:{_BRAND})", m.group(0)[len(m.group("n2")) :].strip()
        ):
            # the word before, whole: "llama 3 A100" is Llama 3; "yi 34b 2 a100" is 2 cards
            before = re.search(r"(?<!\S)([a-z]+)\s*$", m.string[: m.start()])
            if before and before.group(1) not in vocab.load("cards")["count_space"]["words_before"]:
                return None
        return accept(m)

    return check
