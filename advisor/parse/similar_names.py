"""Names near one the user wrote: "did you mean" for a name the catalog lacks, and the same
model re-released with a longer context."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import cache
from typing import NamedTuple

from advisor import catalog
from advisor.catalog import ModelSpec


def _stem(key: str) -> str:
    return re.split(r"[\d.\-]", key, maxsplit=1)[0]


def _size(key: str) -> str | None:
    m = re.search(r"(\d+(?:\.\d+)?)b(?![a-z])", key)
    return m.group(1) if m else None


def _numbers(key: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"\d+(?:\.\d+)?", key))


def _nearness(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    if not a or len(a) != len(b):
        return 0.0
    return sum(1 / (1 + abs(x - y)) for x, y in zip(a, b, strict=True)) / len(a)


class _Alias(NamedTuple):
    """A catalog id or alias with what `suggest` compares of it, computed once."""

    spec_id: str
    name: str  # normalized
    stem: str
    size: str | None
    numbers: tuple[float, ...]
    # each character with its repeat number ("aab": a1 a2 b1): the size of two such sets'
    # intersection is the count of characters the names share, difflib's quick_ratio bound
    letters: frozenset[tuple[str, int]]


# "Did you mean" compares a name with every alias (~950): their normal forms, stems, sizes
# and numbers are a pure function of the catalog (loaded once per process), built once.
@cache
def _aliases() -> tuple[tuple[str, tuple[_Alias, ...]], ...]:
    out = []
    for spec in catalog.models().values():
        names = [catalog.normalize_name(a) for a in (spec.id, *spec.aliases)]
        rows = (_Alias(spec.id, o, _stem(o), _size(o), _numbers(o), _letters(o)) for o in names)
        out.append((spec.id, tuple(rows)))
    return tuple(out)


def _letters(name: str) -> frozenset[tuple[str, int]]:
    seen: Counter[str] = Counter()
    out = []
    for ch in name:
        seen[ch] += 1
        out.append((ch, seen[ch]))
    return frozenset(out)


# Scores below this are never suggested.
_SUGGEST_FLOOR = 0.6
# Float slack for the upper bounds below (their sums are not in the score's order).
_SLACK = 1e-9


def suggest(name: str, n: int = 3, size_b: float | None = None) -> list[str]:
    """Catalog ids close to an unknown name: spelling (edit distance), then the same family
    stem, the same size and nearby numbers rank higher ("qwen2.8-7b" -> qwen2.5-7b first).

    The spelling score (difflib's ratio) is most of the cost, so an alias is scored only when
    an upper bound of its score (difflib's length and letter-count bounds on the ratio, plus
    its bonuses) could reach both the floor and its model's best alias so far: the ids and
    their order are those of scoring every alias."""
    key = catalog.normalize_name(name)
    stem, size = _stem(key), _size(key) or (f"{size_b:g}" if size_b else None)
    key_numbers, key_letters = _numbers(key), _letters(key)
    stem_near: dict[str, bool] = {}  # other stem -> spelt like this stem (per call)
    scored: dict[str, float] = {}
    for spec_id, aliases in _aliases():
        best = 0.0
        for alias in aliases:
            same_stem = bool(stem) and alias.stem == stem
            bonus = 0.15 if same_stem else 0.1 if stem else 0.0
            same_size = bool(size) and alias.size == size
            if same_size:
                bonus += 0.15
            near = _nearness(key_numbers, alias.numbers) if alias.numbers else 0.0
            bonus += 0.3 * near
            need = max(best, _SUGGEST_FLOOR) - bonus - _SLACK
            total_len = len(key) + len(alias.name)
            if 2.0 * min(len(key), len(alias.name)) / total_len < need:
                continue  # difflib's real_quick_ratio
            if 2.0 * len(key_letters & alias.letters) / total_len < need:
                continue  # difflib's quick_ratio
            score = difflib.SequenceMatcher(None, key, alias.name).ratio()
            if same_stem:
                score += 0.15
            elif stem:
                if alias.stem not in stem_near:
                    spelt = difflib.SequenceMatcher(None, stem, alias.stem).ratio()
                    stem_near[alias.stem] = spelt >= 0.8
                if stem_near[alias.stem]:
                    score += 0.1
            if same_size:
                score += 0.15
            score += 0.3 * near
            best = max(best, score)
        if best >= _SUGGEST_FLOOR:
            scored[spec_id] = best
    ranked = sorted(scored.items(), key=lambda kv: -kv[1])
    return [model_id for model_id, score in ranked[:n] if score >= _SUGGEST_FLOOR]


# A sibling is the same model re-released, not a variant trained for something else: a
# coder or a distilled model is no answer to "qwen3-30b-a3b at 128k".
_VARIANT_TAGS = frozenset({"coder", "code", "distill", "math", "vl", "r1", "audio", "embedding"})


def _variant_tags(model_id: str) -> set[str]:
    return set(re.split(r"[-_.]", model_id)) & _VARIANT_TAGS


def longer_context_siblings(spec: ModelSpec, ctx: int) -> list[str]:
    """Same family, kind and size, with the context asked for: Llama-3-8B at 32k ->
    Llama-3.1-8B; Qwen3-30B-A3B at 128k -> its 2507 release, not Qwen3-Coder."""
    out = []
    for other in catalog.models().values():
        if (
            other.id != spec.id
            and other.family == spec.family
            and other.kind == spec.kind
            and _variant_tags(other.id) <= _variant_tags(spec.id)
            and other.arch is not None
            and other.arch.max_context_tokens >= ctx
            and abs(other.params_b - spec.params_b) <= 0.1 * spec.params_b
            and abs(other.active_b - spec.active_b) <= 0.1 * spec.active_b  # MoE is no dense
        ):
            out.append(other.id)
    return out[:3]
