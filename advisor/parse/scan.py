"""The text being read and what has been read from it so far.

Each recognizer consumes the span it uses (blanked out, so a number is never read twice:
the "2" of "2卡" is cards, not a batch size) and writes what it understood into `Reading`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from advisor.catalog import ModelSpec
from advisor.models.choices import Kind
from advisor.parse.mm_config import expand_config_names
from advisor.parse.vocab import CJK_LATIN_EDGE


class Budget(BaseModel):
    amount: float
    currency: str  # CNY or USD
    per_hour: bool  # False: a total budget for the job
    # False: no sign or currency word ("预算8万", "budget 80k"): CNY by default; a purchase
    # answer reads it in the reply's currency instead
    currency_named: bool = True


class ParseError(BaseModel):
    # empty | too_long | unknown_model | unknown_format | bad_value | no_model | context_too_long
    # | not_estimated (a model known by name the engine cannot size yet)
    code: str
    detail: str = ""  # the offending text, for the template
    suggestions: list[str] = []


class Rejected(Exception):  # noqa: N818 - a recognizer's way to stop with a user-facing error
    def __init__(self, error: ParseError) -> None:
        super().__init__(error.code)
        self.error = error


def reject(code: str, detail: str = "", suggestions: list[str] | None = None) -> Rejected:
    return Rejected(ParseError(code=code, detail=detail, suggestions=suggestions or []))


# Recognizers pass their patterns as strings; compiled once here (re's own cache costs a
# type check and a tuple key per call, and a line runs ~70 of them). The patterns come from
# the code and the vocab files, not from users' text, so the table stays small.
_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def compiled(pattern: str, flags: int = re.I) -> re.Pattern[str]:
    try:
        return _COMPILED[pattern, flags]
    except KeyError:
        regex = re.compile(pattern, flags)
        if len(_COMPILED) < 1024:  # bounded all the same
            _COMPILED[pattern, flags] = regex
        return regex


@dataclass
class Scan:
    text: str
    understood: list[str] = field(default_factory=list)
    original: str = ""  # the text before any span was blanked (same positions)
    # take_if's searches that consumed nothing, by id of the pattern: the pattern, the text
    # searched and every match found there. Recognizers try a pattern again before anything
    # is consumed (catalog cards, then memory-only ones, with and without a count): the same
    # text gives the same matches. An entry is used only for the same text object (every
    # consume assigns a new string) and the same pattern (kept in the entry, so its id is
    # not reused); keyed by id, as hashing a Pattern hashes its whole code.
    _unused: dict[int, tuple[re.Pattern[str], str, tuple[re.Match[str], ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.original = self.original or self.text

    def joined_before(self, pos: int) -> bool:
        """Whether the original text has a word character right before `pos` (so a "-" at
        `pos` joins words, as in "foo-chat-7b", rather than signing a number)."""
        return pos > 0 and bool(re.match(r"\w", self.original[pos - 1]))

    def _consume(self, m: re.Match[str], span: tuple[int, int] | None = None) -> None:
        start, end = span or (m.start(), m.end())
        self.understood.append(self.text[start:end].strip())
        self.text = self.text[:start] + " " * (end - start) + self.text[end:]

    def _known(self, regex: re.Pattern[str]) -> tuple[re.Match[str], ...] | None:
        """Every match of `regex` in the text as it is now, if a search already listed them."""
        entry = self._unused.get(id(regex))
        if entry is not None and entry[0] is regex and entry[1] is self.text:
            return entry[2]
        return None

    def take(self, pattern: str | re.Pattern[str], flags: int = re.I) -> re.Match[str] | None:
        if isinstance(pattern, str):
            pattern = compiled(pattern, flags)
        m = pattern.search(self.text)
        if m:
            self._consume(m)
        return m

    def take_if(
        self, pattern: str | re.Pattern[str], accept: Callable[[re.Match[str]], Any]
    ) -> tuple[re.Match[str] | None, Any]:
        """Consume the first match for which accept(match) returns something truthy."""
        regex = compiled(pattern, re.I) if isinstance(pattern, str) else pattern
        known = self._known(regex)
        text = self.text
        seen = []
        for m in regex.finditer(text) if known is None else known:
            value = accept(m)
            if value:
                self._consume(m)
                return m, value
            seen.append(m)
        if known is None:
            self._unused[id(regex)] = (regex, text, tuple(seen))
        return None, None

    def take_all(self, pattern: str | re.Pattern[str], flags: int = re.I) -> list[re.Match[str]]:
        regex = compiled(pattern, flags) if isinstance(pattern, str) else pattern
        out = []
        while m := regex.search(self.text):
            self._consume(m)
            out.append(m)
        return out

    def peek(self, regex: re.Pattern[str]) -> re.Match[str] | None:
        """The first match in the text as it is now, consuming nothing."""
        known = self._known(regex)
        if known is not None:
            return known[0] if known else None
        return regex.search(self.text)


@dataclass
class Reading:
    """Everything the recognizers found; `assemble` turns it into a ParsedQuery."""

    fields: dict[str, Any] = field(default_factory=dict)  # Workload fields, and _ctx/_tokens/…
    spec: ModelSpec | None = None
    params_b: float | None = None
    mode: str | None = None
    kind: Kind | None = None
    gpu_id: str | None = None
    gpu_count: int | None = None
    vram_gib: float | None = None
    budget: Budget | None = None
    hours_per_day: float | None = None  # "每天用8小时": the cards' busy hours (buy or rent)
    ask_count: bool = False  # "需要几张 H100": the count is the question
    ask_offload: bool = False  # "要开offload吗": whether to offload is the question
    laptops: int | None = None  # "2x 4090 laptop": laptops, one GPU each (parse.cards)
    # "ai max+ 395", "dgx spark": a unified-memory machine the catalog lacks, as written
    unknown_machine: str | None = None
    assumed: list[str] = field(default_factory=list)
    # A GGUF repo without a quant type ("Qwen/Qwen2.5-14B-Instruct-GGUF"): Q4_K_M unless a
    # type is named elsewhere in the line ("… q8_0").
    gguf_repo: bool = False
    modes: list[str] = field(default_factory=list)  # every mode word's id, in order read
    post_training: str | None = None  # "grpo", "dpo", …: the method (models.Mode)
    ask_fit: bool = False  # "能跑什么模型", "biggest model I can run": the card's /fit list
    owns_card: bool = False  # "my 3090", "我的 T4": the card named is the user's own
    # A model name the catalog lacks, typed with its size ("olmo2:7b", "falcon3 10b"): the
    # size is read, the name kept as typed so the answer says it is for a generic model.
    unrecognized: str | None = None
    # "3090或4090", "a100 vs h100": cards named beside the first as alternatives (id, count)
    other_cards: list[tuple[str, int | None]] = field(default_factory=list)
    # Cue words of a kind of question ("买", "vs", "多久"; parse/question.py), by cue name
    cues: set[str] = field(default_factory=set)


_TAG_PAIR = re.compile(r"<([a-z][a-z0-9]*)(?:\s[^<>]*)?>(.*?)</\1\s*>", re.I | re.S)
# A config key pasted as JSON or a Python dict ('"max_seq_length": 2048', "{'cutoff_len':
# 4096}"): the quotes and the opening brace are not words, the key is.
_QUOTED_KEY = re.compile(r"\{?\s*[\"'](\w[\w.\-]*)[\"']\s*(?=[:=])")
# kohya sd-scripts' 16-bit training flags (--full_bf16 / --full_fp16: the weights and
# gradients in that format; README "SDXL training"): a full run in that format.
_FULL_16 = re.compile(r"\bfull_(bf16|fp16)\b", re.I)


def normalize(text: str, *, split_cjk: bool = True) -> str:
    text = unicodedata.normalize("NFKC", text)  # full-width digits and letters -> ASCII
    # HTML pasted from a chat or web page ("<b>qwen</b> 7b"): a tag pair is not words, its
    # text is. A lone "<b>" is left as typed (and echoed escaped if it is not understood).
    for _ in range(2 if "</" in text else 0):  # one level of nesting: <b><i>qwen</i></b>
        text = _TAG_PAIR.sub(r" \2 ", text)
    text = text.replace("×", "x").replace("＊", "*")
    text = _QUOTED_KEY.sub(r" \1", text)
    text = _FULL_16.sub(r"full \1", text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    # Chinese glued to a Latin name or number ("部署deepseek-r1:671b", "qwen3.5-27B非常慢",
    # "跑qwen7b的"): Python's \w counts ideographs as word characters, so without a space the
    # name has no word boundary and no recognizer sees it. Chinese writers never space them.
    # A /lab line keeps its spelling (split_cjk=False): its machine name and note are shown.
    if split_cjk:
        text = CJK_LATIN_EDGE.sub(" ", text)
        # "segformer_mit-b5_8xb1-160k_cityscapes-1024x1024": the words it stands for
        text = expand_config_names(text)
    return text.strip()


def number(s: str) -> float:
    return float(s.replace(",", ""))


# k, 万 (10^4), m, 亿 (10^8), b as multipliers of a count
SCALE = {"": 1.0, "k": 1e3, "万": 1e4, "m": 1e6, "亿": 1e8, "b": 1e9}
