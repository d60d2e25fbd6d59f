"""The parser's vocabularies: advisor/data/vocab/*.toml, read once, compiled to patterns.

A new alias, tag or word is a line in a data file; this module only turns word lists into
regular expressions (longest word first, so "zero stage 3" wins over "zero").
"""

from __future__ import annotations

import re
import tomllib
from functools import cache, lru_cache
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


@lru_cache(maxsize=4096)
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


def alternation(words: list[str] | Any, left_edge: bool = True) -> str:
    """One group matching any of `words`, longest first. `left_edge=False`: the words may
    follow a letter or digit (a variant glued to a version, "3vl", "2.5vl")."""
    return _alternation(tuple(words), left_edge)


# Bounded, and keyed by the words themselves: recognizers call `alternation` with vocab lists
# on every line, and building the pattern (a `phrase` per word) was a fifth of a parse.
@lru_cache(maxsize=512)
def _alternation(words: tuple[str, ...], left_edge: bool = True) -> str:
    ordered = sorted({w.lower() for w in words}, key=len, reverse=True)
    patterns = [phrase(w) for w in ordered]
    if not left_edge:
        patterns = [p.removeprefix(_EDGE_BEFORE) for p in patterns]
    return "(?:" + "|".join(_by_first_char(patterns)) + ")"


_EDGE_BEFORE = r"(?<![a-z0-9])"
# One literal character as re.escape writes it, not followed by a quantifier.
_LITERAL = re.compile(r"(?:\\.|[^\\\[\](){}|?*+^$.])(?![?*+{])")


def _by_first_char(patterns: list[str]) -> list[str]:
    """The same alternatives, grouped by their left edge and first character, each group in
    its original order: `(?<![a-z0-9])q(?:4_k_m|8_0)` for `…q4_k_m|…q8_0`. Words that start
    with different characters never match at the same position, so which word matches (and
    the order backtracking tries them in) is unchanged; but Python's re can skip a group on
    its first literal instead of running every word's lookbehind at every position (the word
    lists were half a parse's time)."""
    groups: dict[tuple[bool, str], list[str]] = {}
    for p in patterns:
        edged = p.startswith(_EDGE_BEFORE)
        body = p[len(_EDGE_BEFORE) :] if edged else p
        m = _LITERAL.match(body)
        if m is None:  # not a plain first character: it could compete with any group
            return patterns
        groups.setdefault((edged, m.group(0)), []).append(body[m.end() :])
    out = []
    for (edged, first), rests in groups.items():
        # the edge checked after the first character (the same test: the character before
        # it), so every group starts with a literal that re can reject at once
        edge = f"(?<![a-z0-9]{first})" if edged else ""
        tail = rests[0] if len(rests) == 1 else "(?:" + "|".join(rests) + ")"
        out.append(f"{first}{edge}{tail}")
    return out


_SQUASH = re.compile(r"[\s\-_]+")


def squash(text: str) -> str:
    """A key for word tables: lower-case, no spaces, "-" or "_"."""
    return _SQUASH.sub("", text.lower())


@cache
def squashed(name: str, section: str) -> dict[str, Any]:
    """A vocab section {word: value} keyed by `squash(word)`, built once (read-only)."""
    return {squash(k): v for k, v in load(name)[section].items()}


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
