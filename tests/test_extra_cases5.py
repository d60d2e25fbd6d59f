"""eval/data/extra_cases5.json: measured VRAM cases from sources none of the other sets use
(issue 34 item 6): the shared schema, every case quoted with its source and setup, ids unique
across all sets, at most four cases per source, and the adapter expresses every scorable
case (so `python bench/accuracy.py --cases eval/data/extra_cases5.json` scores them all)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.test_extra_cases import BOUND_KINDS, VIEWS, check_sources_quoted, load
from tests.test_extra_cases2 import source_keys

ROOT = Path(__file__).resolve().parent.parent
FIFTH = ROOT / "eval" / "data" / "extra_cases5.json"
SHARED = ROOT.parent / "shared" / "eval" / "vram_cases.json"
OTHERS = sorted(p for p in (ROOT / "eval" / "data").glob("*cases*.json") if p != FIFTH)
MAX_CASES_PER_SOURCE = 4


def publisher(case: dict) -> str:
    """The group bench/accuracy.py's leave-one-source-out takes out together: the
    repository (or the post, for blog repos)."""
    from checks.accuracy import source_group

    return source_group(case)


@pytest.fixture(scope="module")
def fifth() -> list[dict]:
    return load(FIFTH)


def others() -> list[dict]:
    cases = [c for p in OTHERS for c in load(p)]
    return cases + (load(SHARED) if SHARED.exists() else [])


def test_the_file_is_one_list_of_cases_in_the_shared_schema(fifth: list[dict]) -> None:
    assert isinstance(fifth, list) and len(fifth) >= 10
    for case in fifth:
        assert case["model"]["params_b"] > 0, case["id"]
        measured = case["measured"]
        assert measured["what"] in VIEWS, case["id"]
        bound = measured.get("bound")
        assert (measured["value_gib"] or 0) > 0 or bound, case["id"]
        if bound:
            assert bound["kind"] in BOUND_KINDS and bound["limit_gib"] > 0, case["id"]


def test_every_case_names_its_source_quotes_it_and_states_its_setup(fifth: list[dict]) -> None:
    check_sources_quoted(fifth)
    for case in fifth:
        assert case["gpu"] and case["workload"]["framework"], case["id"]


def test_ids_are_unique_across_all_sets(fifth: list[dict]) -> None:
    ids = [c["id"] for c in fifth]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {c["id"] for c in others()}


def test_no_source_is_shared_with_another_set(fifth: list[dict]) -> None:
    """Neither the document nor its publisher (a repository already quoted elsewhere)."""
    rest = others()
    used = set().union(*(source_keys(c) for c in rest)) | {publisher(c) for c in rest}
    for case in fifth:
        keys = source_keys(case) | {publisher(case)}
        assert not keys & used, (case["id"], keys & used)


def test_no_source_gives_more_than_four_cases(fifth: list[dict]) -> None:
    counts = Counter(publisher(c) for c in fifth)
    assert max(counts.values()) <= MAX_CASES_PER_SOURCE, counts.most_common(3)


def test_the_adapter_expresses_every_scorable_case(fifth: list[dict]) -> None:
    from checks.accuracy import score

    rows = score(fifth)
    assert rows and not [r for r in rows if "failed" in r]
    assert all("error" in r or "bound" in r for r in rows)
    assert len(rows) == sum(1 for c in fifth if c["scorable"])
