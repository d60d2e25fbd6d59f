"""A model the catalog lacks, named with a size it was released at: "qwen2-vl-72b",
"Tarsier-34b", "Chat-UniVi-7B-v1.5", "InternVL2-Llama3-76B" (vocab/outside.toml). Read as a
generic model of that size with the name kept (ParsedQuery.unrecognized), as a new release of
a known line is (parse/releases.py): the answer says the model is not in the catalog and the
bot looks the name up on the Hub. A size the line was never released at stays "did you mean".
"""

from __future__ import annotations

import re
from functools import cache, partial

from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan


@cache
def _lines() -> list[tuple[re.Pattern[str], frozenset[float]]]:
    # the tails a repo name carries ("-Instruct", "-chat", "-v1.5", "-V1-5"); a format tail
    # ("-AWQ") is left for the format recognizers
    tails = vocab.alternation(vocab.load("models")["release_variants"]["name_tails"], False)
    out = []
    for line in vocab.load("outside")["line"]:
        name = vocab.alternation(line["names"])
        pattern = re.compile(
            rf"(?<![\w/]){name}[\s\-_]*(?P<size>\d+(?:\.\d+)?)\s*b(?![a-z0-9])"
            rf"(?:[\-_](?:v\d+(?:[.\-]\d+)?|{tails})(?![a-z0-9]))*"
        )
        out.append((pattern, frozenset(float(s) for s in line["sizes"])))
    return out


def _size_in(sizes: frozenset[float] | set[float] | tuple[float, ...], m: re.Match[str]) -> bool:
    return float(m.group("size")) in sizes


def recognize_outside(s: Scan, r: Reading) -> None:
    """Runs after the catalog, family and new-release recognizers found no model."""
    if r.spec is not None or r.params_b is not None or r.unrecognized is not None:
        return
    for pattern, sizes in _lines():
        m, _ = s.take_if(pattern, partial(_size_in, sizes))
        if m is not None:
            r.params_b = float(m.group("size"))
            r.unrecognized = m.group(0).strip()
            return
