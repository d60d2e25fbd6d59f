"""bench/data/extra_cases3.json: measurements found while reading source for the tune
helper's rules, kept apart to check those rules on cases they were not made from. Same
schema and source rules as the other sets; no source shared with them; every scorable
case is expressible by the adapter."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from checks.accuracy import score
from tests.test_extra_cases import (
    BOUND_KINDS,
    CATEGORIES,
    VIEWS,
    check_sources_quoted,
    load,
)
from tests.test_extra_cases2 import SECOND, SHARED, THIRD, source_keys

ROOT = Path(__file__).resolve().parent.parent
FOURTH = ROOT / "bench" / "data" / "extra_cases3.json"


@pytest.fixture(scope="module")
def fourth() -> list[dict]:
    return load(FOURTH)


def test_each_case_is_in_the_shared_schema(fourth: list[dict]) -> None:
    for case in fourth:
        assert case["category"] in CATEGORIES, case["id"]
        assert case["model"]["params_b"] > 0, case["id"]
        measured = case["measured"]
        assert measured["what"] in VIEWS, case["id"]
        bound = measured.get("bound")
        assert (measured["value_gib"] or 0) > 0 or bound, case["id"]
        if bound:
            assert bound["kind"] in BOUND_KINDS, case["id"]
    check_sources_quoted(fourth)


def test_ids_and_sources_are_new(fourth: list[dict]) -> None:
    others = load(SECOND) + load(THIRD) + (load(SHARED) if SHARED.exists() else [])
    ids = [c["id"] for c in fourth]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {c["id"] for c in others}
    used = set().union(*(source_keys(c) for c in others))
    for case in fourth:
        assert not source_keys(case) & used, case["id"]
    assert max(Counter(min(source_keys(c)) for c in fourth).values()) <= 4


def test_the_adapter_expresses_every_scorable_case(fourth: list[dict]) -> None:
    rows = score(fourth)
    assert rows and not [r for r in rows if "failed" in r]
