"""Cards, counts and memory sizes: "2x3090", "两张3090", "单卡A6000", "v100 32g", "4卡",
"我只有 12g 显存". Names resolve through the catalog (gpus.toml) and vocab/cards.toml."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any, cast

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
    r"(?:[\s\-]?(?:ti|super|ada|pcie|sxm\d?|nvl|pro|max|ultra|xtx|xt|gre|s|d[\s\-]?v2|(?<=d)[\s\-]?v2|d)(?![a-z]))*)"
    # its compute written after it: Ascend 910B parts by TFLOPS ("910b280T", LLaMA-Factory #4297)
    r"(?:[\s\-]?\d{3}\s?t(?:flops)?(?![a-z0-9]))?"
    # "v100 32g", and in brackets "a100(40g)", "A10(24G)" (not "3090 (48GB total)"); "2080ti
    # 魔改22g": a rework word between the card and its memory (vocab/cards.toml)
    r"(?:[\s\-]?(?P<paren>\()?"
    rf"(?:(?:{_CARD_TO_MEMORY})\s*)?"
    r"(?P<mem>\d{2,3})\s?g(?:b|ib)?(?(paren)\))(?![a-z0-9]))?"
)
_EDGE = r"(?<![a-z0-9.\-:/_])"


@cache
def _count_word() -> str:
    words = vocab.load("cards")["count_words"]
    return "(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + ")"


@cache
def _english_count_word() -> str:
    words = [w for w in vocab.load("cards")["count_words"] if w.isascii()]
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


def _count(text: str) -> int:
    words = vocab.load("cards")["count_words"]
    return int(text) if text.isdigit() else int(words[text])


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    units = vocab.load("cards")["units"]
    before = "(?:" + "|".join(re.escape(u) for u in units["before_card"]) + ")"
    alone = "(?:" + "|".join(re.escape(u) for u in sorted(units["alone"], key=len, reverse=True))
    alone += ")"
    n = rf"(?P<n>\d{{1,4}}|{_count_word()})"
    glued = "(?:" + "|".join(map(re.escape, units["glued_counts"])) + ")"
    return {
        "explicit": re.compile(r"\bgpu:(?P<id>[a-z0-9.\-]+)"),
        "count_first": re.compile(
            rf"{_EDGE}(?:{n}\s*{before}|(?P<n2>{glued}))\s*(?:的\s*)?{_NAME}"
        ),
        # "two 3090s", "dual 3090", "4 RTX 3090": a count and a space, when the count is a
        # word or the card carries its brand; "is 16 H100 enough", "8 A100 80g": or the card
        # is a data-center part, a letter and its number (simplescaling/s1 #62, Megatron-LLM
        # #52, 2026-12-01), which no size or version is written as
        "count_space": re.compile(
            rf"{_EDGE}(?:(?P<n>{_english_count_word()})\s+|(?P<n2>\d{{1,2}})\s+"
            rf"(?=(?:{_BRAND})|[a-z]\d{{2,3}}(?![\d.]))){_NAME}"
        ),
        # "on 2 A100", "with 4 3090s", "oom in 4 A100": an English count with no unit, after a
        # preposition
        "count_prep": re.compile(
            rf"(?<![a-z])(?:on|with|have|using|rent|got|need|in|across)\s+(?:a\s+)?"
            rf"(?P<n>\d{{1,2}}|{_count_word()})\s+{_NAME}"
        ),
        "count_after": re.compile(
            rf"{_EDGE}{_NAME}\s*(?:[x*]\s*(?P<n>\d{{1,4}})(?![\d.])|(?P<n2>\d{{1,4}}|{_count_word()})"
            rf"\s*(?:张|块|卡|台)"
            # "A800 7*80g": the count times each card's memory (LLaMA-Factory #6999)
            r"|(?P<n3>\d{1,2})\s*[x*]\s*(?=(?P<mem_each>\d{2,3})\s*g(?:b|ib)?(?![a-z0-9])))"
        ),
        "alone": re.compile(rf"{_EDGE}{_NAME}(?![a-z0-9.])"),
        # what the count patterns cannot match without (a preposition and a space; a count
        # and its unit; a count and a space; a count sign or unit after the card): tested
        # first, as the card name in each is tried at every position
        "count_prep_needs": re.compile(r"(?:on|with|have|using|rent|got|need|in|across)\s"),
        "count_first_needs": re.compile(rf"(?:\d|{_count_word()})\s*{before}|{glued}"),
        "count_space_needs": re.compile(rf"\d\s|{_english_count_word()}\s"),
        "count_after_needs": re.compile(r"[x*]\s*\d|[张块卡台]"),
        "count_only": re.compile(
            # "x101" / "x152" (and "x101-32x4d") name ResNeXt backbones, not 101 cards (seg,
            # 2026-12-01: "cascade mask rcnn x101" was read as 101 GPUs)
            rf"{_EDGE}(?P<n>\d{{1,4}}|{_count_word()})\s*{alone}(?![a-z])"
            rf"|(?<![\w.])x\s?(?!(?:101|152)\b)(?P<n2>\d{{1,4}})\b(?!-)"
        ),
        # "one 24GB gpu", "a single 24gb GPU", "4张48G显卡", "3张24GB的显卡": the count, the
        # size left for recognize_vram
        "count_before_memory": re.compile(
            rf"{_EDGE}(?P<n>\d{{1,2}}|{_count_word()})(?:\s+|\s*(?:张|块|个)\s*)"
            r"(?=\d{1,3}\s*g(?:b|ib)?\s*(?:vram\s*)?(?:的\s*)?(?:gpus?|cards?|显卡|卡)(?![a-z]))"
        ),
        # "2台 H100*8", "2 nodes of 8xH100": machines times the cards in each
        "machines": re.compile(
            rf"{_EDGE}(?P<m>\d{{1,3}}|{_count_word()})\s*(?:台|nodes?\s+of|machines?\s+of)\s*"
            rf"{_NAME}\s*[x*]\s*(?P<n>\d{{1,2}})(?![\d.])"
        ),
        # "2台8卡a800", "双机16卡A800": machines, then cards (each machine's, or all of them)
        "machines_cards": re.compile(
            rf"{_EDGE}(?P<m>\d{{1,3}}|{_count_word()})\s*(?:台|机|nodes?)\s*(?:的\s*)?"
            rf"(?P<n>\d{{1,3}}|{_count_word()})\s*(?:卡|张)\s*(?:的\s*)?{_NAME}"
        ),
        # a word each of machines, machines_cards and machines_count_first holds: tested
        # first, as their counts and card names are tried at every position and few lines
        # name machines
        "machine_words": re.compile(r"台|机|node|machine"),
        "machines_count_first": re.compile(
            rf"{_EDGE}(?P<m>\d{{1,3}}|{_count_word()})\s*(?:台|nodes?\s+of|machines?\s+of)\s*"
            rf"(?P<n>\d{{1,2}})\s*[x*]\s*{_NAME}"
        ),
        "many": re.compile(r"多卡|multi[\s\-]?gpu|多张卡"),
        # "两张" with no card after it: cards, unless pictures follow ("两张图"); digits
        # before 张 stay image counts ("sdxl 4张")
        "count_words_only": re.compile(rf"(?P<n>{_count_word()})\s*(?:张|块)(?!图|图片|照片)"),
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
    if spec is None and key.endswith("s") and len(key) > 3:  # "3090s", "a100s"
        spec = catalog.find_gpu(key[:-1]) or _spelled(spellings, key[:-1])
    if spec is None:
        return None, None
    if mem and _as_smi_shows(spec, float(mem)):
        return spec, None  # "L40(45GB)": the card's 48 GB as nvidia-smi shows it, in GiB
    if mem and round(spec.vram_gb) != int(mem):
        sibling = _sibling_with_memory(spec, int(mem))
        if sibling is not None:
            return sibling, None
        return spec, float(mem)
    return spec, None


def _as_smi_shows(spec: GpuSpec, gib: float) -> bool:
    """A size up to a tenth under the card's GB is the card's own memory as nvidia-smi and
    torch report it, in GiB (48 GB = 44.7 GiB; 80 GB = 74.5 GiB), not another part."""
    return 0.9 * spec.vram_gb <= gib <= spec.vram_gb + 0.5


def _spelled(spellings: dict[str, str], key: str) -> GpuSpec | None:
    gpu_id = spellings.get(key) or spellings.get(key.removeprefix("rtx"))
    return catalog.gpus()[gpu_id] if gpu_id else None


def _sibling_with_memory(spec: GpuSpec, mem: int) -> GpuSpec | None:
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


def _accept(m: re.Match[str]) -> tuple[GpuSpec, float | None] | None:
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


def _accept_memory_only(m: re.Match[str]) -> tuple[str, float] | None:
    """A card the catalog lacks but whose memory is known (vocab/cards.toml memory_only)."""
    table = vocab.squashed("cards", "memory_only")
    card = table.get(vocab.squash(m.group("name")))
    if card is None:
        return None
    return card["name"], float(_memory_of(m) or card["gb"])


def _set_count(r: Reading, n: int) -> None:
    if not 1 <= n <= MAX_GPUS:
        raise reject("bad_value", "num_gpus")
    r.gpu_count = n


def _set_card(r: Reading, found: tuple[GpuSpec, float | None]) -> None:
    spec, odd_mem = found
    r.gpu_id = spec.id
    if odd_mem is not None:
        r.vram_gib = odd_mem
        r.assumed.append(f"card_memory = {spec.name} {odd_mem:g} GB")


def _set_memory_only(r: Reading, found: tuple[str, float]) -> None:
    name, gib = found
    r.vram_gib = gib
    r.assumed.append(f"card_outside = {name} {gib:g} GB")


def _find_card(s: Scan, r: Reading, accept: Callable, apply: Callable) -> re.Match[str] | None:
    """The card with its count before ("两张3090", "on 2 A100") or after ("a100*8"), else
    alone; `accept` decides what is a card, `apply` records it. Returns where it was read."""
    p = _patterns()
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
                _set_count(r, _count(n))
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


_LAPTOP = r"(?:laptop|notebook|mobile|移动版|笔记本版|笔记本电脑|笔记本)"
# "2x 4090 laptop", "2台笔记本 4060", "两台 4060 笔记本": two laptops, one GPU each
_LAPTOPS = r"(?:(?P<laptops>\d{{1,2}}|{words})\s*[x×*台张]\s*)?"
_LAPTOP_CARD = (
    r"(?:nvidia\s*|geforce\s*|rtx\s*)*(?P<name>[2-5]0[5-9]0(?:\s?ti)?)"
    r"(?:\s*(?P<mem>\d{1,2})\s*g(?:b|ib)?(?![a-z0-9]))?"
)


@cache
def _laptop_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    laptops = _LAPTOPS.format(words=_count_word())
    after = re.compile(rf"{_EDGE}{laptops}{_LAPTOP_CARD}\s*(?:gpu\s*)?{_LAPTOP}(?:\s*gpu)?", re.I)
    before = re.compile(
        rf"{laptops}{_LAPTOP}\s*(?:gpu|上的?|的|是|用)?\s*{_EDGE}{_LAPTOP_CARD}", re.I
    )
    return after, before


# The laptop word both laptop patterns hold: tested first, as their card names are tried at
# every position and few lines say laptop.
_LAPTOP_WORD = re.compile(_LAPTOP, re.I)


def _laptop_card(s: Scan, r: Reading) -> int | None:
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
        laptops = _count(m.group("laptops")) if m.group("laptops") else 1
        if card.get("id") in catalog.gpus():
            mem = m.group("mem")
            odd = float(mem) if mem and int(mem) != card["gb"] else None
            _set_card(r, (catalog.gpus()[card["id"]], odd))
            return laptops
        _set_memory_only(r, (card["name"], float(m.group("mem") or card["gb"])))
        return laptops
    return None


@cache
def _laptop_ids() -> frozenset[str]:
    """The catalog ids of laptop parts (vocab cards.toml [laptop] `id`)."""
    return frozenset(c["id"] for c in vocab.load("cards")["laptop"].values() if "id" in c)


def _one_per_laptop(r: Reading, laptops: int) -> None:
    """A laptop has one GPU: "2x 4090 laptop" or "两张 4090 笔记本" is two laptops, whose
    memory does not add up (no split over cards between them). Judged for one, and said so
    (before, "2x" was dropped unread in English and "两张" read as two cards in one box)."""
    count = max(laptops, r.gpu_count or 1)
    if count > 1:
        r.gpu_count, r.laptops = None, count
        r.assumed.append(f"laptops = {count}")


@cache
def _owns() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("words")["owns_card"]["words"]))


def recognize_cards(s: Scan, r: Reading) -> None:
    """A named card, with its count before or after it, else a count alone."""
    r.owns_card = r.owns_card or bool(_owns().search(s.text))  # read, not consumed
    p = _patterns()
    laptops = _laptop_card(s, r)
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
            _set_count(r, _count(cast(str, m.group("n") or m.groupdict().get("n2"))))
    elif r.gpu_count is None and s.take(p["many"]):
        r.assumed.append("multi_gpu = ?")
    if r.gpu_count is None and s.take(p["ask_count"]):
        r.ask_count = True
    if laptops or r.gpu_id in _laptop_ids():  # "2 gpus on gpu:rtx-4090-laptop" too
        _one_per_laptop(r, laptops or 1)


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
        elif _find_card(s, other, _accept, _set_card) is None or other.gpu_id is None:
            return
        known = [g for g, _ in r.other_cards]
        if other.gpu_id != r.gpu_id and other.gpu_id not in known:
            r.other_cards.append((other.gpu_id, other.gpu_count))


@cache
def _times_memory() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = vocab.load("cards")["vram"]
    not_before = vocab.alternation(words["not_before"])
    pattern = re.compile(
        rf"{_EDGE}(?P<n>\d{{1,2}})\s*[x*]\s*(?P<gb>\d{{2,3}})\s*g(?:b|ib)?(?![a-z0-9])"
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
        _set_count(r, int(m.group("n")))
        r.vram_gib = gib
        return


@cache
def _glued() -> re.Pattern[str]:
    table = vocab.load("cards")["glued_memory"]
    names = "|".join(sorted(map(re.escape, table), key=len, reverse=True))
    sizes = "|".join(sorted({str(gb) for v in table.values() for gb in v}, key=len, reverse=True))
    return re.compile(
        rf"{_EDGE}(?P<name>{names})(?P<mem>{sizes})(?:g|gb)?(?![a-z0-9])"
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
        _set_card(r, glued)
        if m.group("n"):
            _set_count(r, int(m.group("n")))
        return m.end()
    if p["machine_words"].search(s.text) and (end := _machines_card(s, r, p)) is not None:
        return end
    found_at = _find_card(s, r, _accept, _set_card) or _find_card(
        s, r, _accept_memory_only, _set_memory_only
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
    m, found = s.take_if(p["machines"], _accept)
    if not found:
        m, found = s.take_if(p["machines_count_first"], _accept)
    if found and m is not None:
        _set_card(r, found)
        _set_count(r, _count(m.group("m")) * _count(m.group("n")))
        return m.end()
    if (taken := s.take_if(p["machines_cards"], _accept))[1] and taken[0] is not None:
        _set_card(r, taken[1])
        machines, n = _count(taken[0].group("m")), _count(taken[0].group("n"))
        # a server holds at most max_cards_per_machine cards: "2台8卡" is 8 in each,
        # "双机16卡" all 16 together
        per_machine = n <= vocab.load("cards")["machines"]["max_cards_per_machine"]
        _set_count(r, machines * n if per_machine else n)
        return taken[0].end()
    return None


@cache
def _vram_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = vocab.load("cards")["vram"]
    size = r"(?P<gb>\d{1,3}(?:\.\d+)?)\s*(?:g|gb|gib|G)(?![a-z0-9])"
    after = re.compile(rf"{_EDGE}{size}\s*(?:的)?\s*{vocab.alternation(words['after'])}")
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
        rf"{_EDGE}(?P<gb>\d{{1,3}}(?:\.\d+)?)\s*(?:gb|gib|g)(?![a-z0-9])(?!\s*{not_before})"
    )


def _take_named_card_memory(s: Scan, r: Reading) -> None:
    """ "12g 3060", "2x 3090 (48GB total)": a size that is the named card's memory, or all of
    them together, says nothing new; it is read, not ignored."""
    spec = catalog.gpus()[r.gpu_id or ""]
    total = round(spec.vram_gb) * (r.gpu_count or 1)

    def the_cards(m: re.Match[str]) -> bool:
        # "L40S，45G显存" (ms-swift #1225, 2026-12-01): the card's memory, in GiB
        gib = float(m.group("gb"))
        return _as_smi_shows(spec, gib) or round(gib) == total

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
    return re.compile(rf"{before}\s*(?:了)?\s*{size}|{_EDGE}{size}\s*{after}")


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
