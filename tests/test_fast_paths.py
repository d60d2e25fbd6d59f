"""The engine's fast paths give what the plain paths give (issue 18): grouped word
alternations match the same spans as one alternative per word, and the shared cheap-fix
search (CheapFixes) finds the fix `fixes_for` finds, card by card. bench/golden.py checks
whole answers; these pin the two rewrites that are not expression-for-expression copies."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from answer_questions import questions

from advisor import catalog
from advisor.parse import parse_query, vocab
from advisor.recommend.estimates import estimate
from advisor.recommend.fixes import CheapFixes, fixes_for, workload_for

DATA = Path(__file__).parent / "data"


def _plain_alternation(words: tuple[str, ...]) -> str:
    """vocab.alternation as it was: every word its own alternative, longest first."""
    ordered = sorted({w.lower() for w in words}, key=len, reverse=True)
    return "(?:" + "|".join(vocab.phrase(w) for w in ordered) + ")"


def _lines() -> list[str]:
    out: list[str] = []
    for table in sorted(DATA.glob("parse_lines*.toml")):
        out += [row["t"] for row in tomllib.loads(table.read_text())["line"]]
    return out


def test_grouped_alternations_match_what_one_alternative_per_word_matches() -> None:
    lines = _lines()
    word_lists = _alternations_used()
    assert len(word_lists) > 30
    texts = [vocab.CJK_LATIN_EDGE.sub(" ", line.lower()) for line in lines]
    for words in word_lists:
        grouped = re.compile(vocab.alternation(words), re.I)
        plain = re.compile(_plain_alternation(words), re.I)
        for text in texts:
            a, b = grouped.search(text), plain.search(text)
            assert (a and a.span()) == (b and b.span()), (words[:3], text)


def _alternations_used() -> list[tuple[str, ...]]:
    """Every word list of the vocab files (advisor/data/vocab/*.toml) and every word table's
    words: what the recognizers turn into alternations."""
    out: list[tuple[str, ...]] = []

    def walk(node: object) -> None:
        if isinstance(node, list) and node and all(isinstance(x, str) for x in node):
            out.append(tuple(node))
        elif isinstance(node, dict):
            scalars = [k for k, v in node.items() if not isinstance(v, dict | list)]
            if scalars:
                out.append(tuple(scalars))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for path in sorted(vocab.VOCAB_DIR.glob("*.toml")):
        walk(vocab.load(path.stem))
    return list(dict.fromkeys(out))


@pytest.mark.parametrize("q", questions(60, seed=18))
def test_cheap_fix_search_finds_what_fixes_for_finds_on_every_card(q: str) -> None:
    w = parse_query(q).workload
    assert w is not None
    cheap = CheapFixes()
    checked = 0
    for count in (1, 2, 4):
        result = estimate(workload_for(w, count))
        if result.estimate is None:
            continue  # rendering, video: no memory formula, no fixes
        for gpu in catalog.gpus().values():
            for blocked in (False, True):
                expected = fixes_for(result, gpu, only_cheap=True, limit=1, blocked=blocked)
                got = cheap.first(result, gpu, blocked)
                want = (expected[0][0], expected[0][1].estimate.total_bytes) if expected else None
                have = (got[0], got[1].estimate.total_bytes) if got else None
                assert have == want, (count, gpu.id, blocked)
                checked += 1
    if checked == 0:
        pytest.skip("a job with no memory formula has no fixes to compare")
