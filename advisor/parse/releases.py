"""A release of a model line the catalog knows, newer than the catalog, typed with its size:
"qwen3.5 397b", "Qwen3-VL-235B-A22B-Instruct", "glm-4v-9b", "intern-vl-3.5-241B". Read as
a generic model of that size with the name kept (ParsedQuery.unrecognized), so the answer
says the model is not in the catalog and the bot looks the name up on the Hub, rather than
"did you mean" another model.

Telling a new release from a misspelling: the version must be newer than the newest the
catalog holds for that line (family and variant, e.g. Qwen-VL at 2.5), and at most one
version past the family's newest (Qwen at 3: up to 4). "qwen2.8 7b" (older than Qwen3),
"gemma-3-13b" (Gemma 3 is in the catalog, the size is the mistake) and "llama9 7b" (five
versions on) stay "did you mean". Lines and their newest versions come from the catalog's
own ids, so adding a model moves the line's newest version with it.
"""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan

# A catalog id's line and version: "qwen2.5-vl-7b" -> (qwen, vl, 2.5), "llama-3.1-8b" ->
# (llama, "", 3.1), "internvl2.5-8b" -> (internvl, "", 2.5). Ids of other shapes are no line.
_ID = re.compile(r"(?P<fam>[a-z]+)-?(?P<ver>\d+(?:\.\d+)?)(?=-|$)(?:-(?P<var>[a-z][a-z0-9]*))?")


@cache
def _newest() -> dict[tuple[str, str], float]:
    """(family, variant) -> the newest version the catalog holds; variant "" is the base line.
    A variant word the vocabulary does not list ("scout", "moe", "base") counts as the base."""
    variants = set(vocab.load("models")["release_variants"]["words"])
    out: dict[tuple[str, str], float] = {}
    for spec in catalog.models().values():
        m = _ID.match(spec.id)
        if m is None:
            continue
        var = m.group("var") if m.group("var") in variants else ""
        key = (m.group("fam"), var)
        out[key] = max(out.get(key, 0.0), float(m.group("ver")))
    return out


@cache
def _pattern() -> re.Pattern[str]:
    words = vocab.load("models")["release_variants"]
    variant = vocab.alternation(words["words"], left_edge=False)
    tail = vocab.alternation(words["name_tails"], left_edge=False)
    return re.compile(
        r"(?<![\w./:\-])(?P<fam>[a-z]+(?:[\-_][a-z]+)?)[\-_ ]?(?P<ver>\d+(?:\.\d+)?)"
        rf"(?:[\-_ ]?(?P<var>{variant}))?[\-_ ]*"
        r"(?P<size>\d+(?:\.\d+)?)\s*b(?P<active>[\-_]a\d+(?:\.\d+)?b)?"
        rf"(?:[\-_](?P<var2>{variant}))?(?:[\-_]{tail})*(?![a-z0-9])"
    )


def _is_new_release(m: re.Match[str]) -> bool:
    fam = vocab.squash(m.group("fam"))
    var = m.group("var") or m.group("var2") or ""
    newest = _newest()
    family = [v for (f, _), v in newest.items() if f == fam]
    if not family:
        return False  # not a line the catalog knows ("olmo-2-7b"): left to "did you mean"
    ver = float(m.group("ver"))
    line = newest.get((fam, var))
    return ver <= max(family) + 1 and (line is None or ver > line)


def is_new_release(name: str) -> bool:
    """Whether a whole name ("qwen3.5-122b", from the Ollama tag qwen3.5:122b) is a new
    release of a known line, as recognize_new_release reads one in a line."""
    m = _pattern().fullmatch(name.lower())
    return m is not None and _is_new_release(m)


def recognize_new_release(s: Scan, r: Reading) -> None:
    """Runs after the catalog and family recognizers found no model: the size is read, the
    name kept as typed."""
    if r.spec is not None or r.params_b is not None or r.unrecognized is not None:
        return
    m, _ = s.take_if(_pattern(), _is_new_release)
    if m is None:
        return
    size = float(m.group("size"))
    if not 0 < size <= 20000:
        return
    r.params_b = size
    r.unrecognized = m.group(0).strip()
