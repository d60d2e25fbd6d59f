"""eval/data/extra_cases6.json: measured VRAM cases from sources none of the other sets use
(issue 34 item 6, second batch): the shared schema, every case quoted with its source and setup,
ids unique across all sets, at most four cases per source counted over every case file, and the
adapter expresses every scorable case (so `python bench/accuracy.py --cases
eval/data/extra_cases6.json` scores them all)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.test_extra_cases import BOUND_KINDS, VIEWS, check_sources_quoted, load
from tests.test_extra_cases2 import source_keys
from tests.test_extra_cases5 import MAX_CASES_PER_SOURCE, publisher

ROOT = Path(__file__).resolve().parent.parent
SIXTH = ROOT / "eval" / "data" / "extra_cases6.json"
SHARED = ROOT.parent / "shared" / "eval" / "vram_cases.json"
OTHERS = sorted(p for p in (ROOT / "eval" / "data").glob("*cases*.json") if p != SIXTH)


@pytest.fixture(scope="module")
def sixth() -> list[dict]:
    return load(SIXTH)


def others() -> list[dict]:
    cases = [c for p in OTHERS for c in load(p)]
    return cases + (load(SHARED) if SHARED.exists() else [])


def test_the_file_is_one_list_of_cases_in_the_shared_schema(sixth: list[dict]) -> None:
    assert isinstance(sixth, list) and len(sixth) >= 10
    for case in sixth:
        assert case["model"]["params_b"] > 0, case["id"]
        measured = case["measured"]
        assert measured["what"] in VIEWS, case["id"]
        bound = measured.get("bound")
        assert (measured["value_gib"] or 0) > 0 or bound, case["id"]
        if bound:
            assert bound["kind"] in BOUND_KINDS and bound["limit_gib"] > 0, case["id"]


def test_every_case_names_its_source_quotes_it_and_states_its_setup(sixth: list[dict]) -> None:
    check_sources_quoted(sixth)
    for case in sixth:
        assert case["gpu"] and case["workload"]["framework"], case["id"]


def test_ids_are_unique_across_all_sets(sixth: list[dict]) -> None:
    ids = [c["id"] for c in sixth]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {c["id"] for c in others()}


def test_no_source_is_shared_with_another_set(sixth: list[dict]) -> None:
    """Neither the document nor its publisher (a repository already quoted elsewhere)."""
    rest = others()
    used = set().union(*(source_keys(c) for c in rest)) | {publisher(c) for c in rest}
    for case in sixth:
        keys = source_keys(case) | {publisher(case)}
        assert not keys & used, (case["id"], keys & used)


def test_no_source_gives_more_than_four_cases_over_all_files(sixth: list[dict]) -> None:
    counts = Counter(publisher(c) for c in sixth + others())
    mine = {publisher(c) for c in sixth}
    worst = max(counts[p] for p in mine)
    assert worst <= MAX_CASES_PER_SOURCE, [(p, counts[p]) for p in mine if counts[p] > 4]


def test_the_adapter_expresses_every_scorable_case(sixth: list[dict]) -> None:
    from checks.accuracy import score

    rows = score(sixth)
    assert rows and not [r for r in rows if "failed" in r]
    assert all("error" in r or "bound" in r for r in rows)
    assert len(rows) == sum(1 for c in sixth if c["scorable"])
