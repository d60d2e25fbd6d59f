"""The parser's vocabularies: advisor/data/vocab/*.toml, read once, compiled to patterns.

A new alias, tag or word is a line in a data file; this module only turns word lists into
regular expressions (longest word first, so "zero stage 3" wins over "zero").
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from typing import Any

from advisor.catalog import DATA_DIR

VOCAB_DIR = DATA_DIR / "vocab"

# Where a Chinese character meets a Latin letter or digit ("部署deepseek", "27B非常").
CJK_LATIN_EDGE = re.compile(
    r"(?<=[\u4e00-\u9fff])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[\u4e00-\u9fff])"
)


@cache
def load(name: str) -> dict[str, Any]:
    with (VOCAB_DIR / f"{name}.toml").open("rb") as fh:
        return tomllib.load(fh)


def phrase(word: str) -> str:
    """A word as a pattern: spaces also match "-", "_" or nothing; ASCII words get edges so
    "ft" is not found inside "left" and "tp" not inside "http". Where Chinese meets a Latin
    letter or digit ("4位", "int4量化") a space may stand between them too: scan.normalize
    puts one there, as a line glues them ("跑qwen7b的")."""
    word = CJK_LATIN_EDGE.sub(" ", word)
    parts = [re.escape(p) for p in word.lower().split(" ")]
    body = r"[\s\-_]?".join(parts)
    if re.match(r"[a-z0-9]", word, re.I):
        body = r"(?<![a-z0-9])" + body
    if re.search(r"[a-z0-9]$", word, re.I):
        body += r"(?![a-z0-9])"
    return body


def alternation(words: list[str] | Any) -> str:
    """One group matching any of `words`, longest first."""
    ordered = sorted({w.lower() for w in words}, key=len, reverse=True)
    return "(?:" + "|".join(phrase(w) for w in ordered) + ")"


def squash(text: str) -> str:
    """A key for word tables: lower-case, no spaces, "-" or "_"."""
    return re.sub(r"[\s\-_]+", "", text.lower())


@cache
def word_table(name: str, section: str) -> tuple[re.Pattern[str], dict[str, Any]]:
    """A {word: value} section as (pattern matching any word, lookup by squashed word)."""
    table = load(name)[section]
    words = {k: v for k, v in table.items() if not isinstance(v, dict | list)}
    return re.compile(alternation(words)), {squash(k): v for k, v in words.items()}


@cache
def stopwords() -> frozenset[str]:
    raw = load("words")["stopwords"]
    return frozenset(w.lower() for w in raw["en"] + raw["zh"])


@cache
@cache
def card_vendors() -> tuple[frozenset[str], re.Pattern[str]]:
    spec = load("words")["card_vendors"]
    return frozenset(spec["words"]), re.compile(spec["model"])


def model_prefixes() -> tuple[str, ...]:
    return tuple(load("words")["model_prefixes"]["words"])


@cache
def knob_words(name: str) -> str:
    return alternation(load("words")["knobs"][name])


@cache
def cjk_filler() -> re.Pattern[str]:
    """The Chinese stopwords as one pattern, longest first, to strip from unread runs."""
    words = sorted((w for w in load("words")["stopwords"]["zh"]), key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in words))
