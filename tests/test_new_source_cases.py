"""bench/data/extra_cases5.json to extra_cases27.json:
measured VRAM cases from sources none of the other sets use: the shared schema, every case quoted with its source
and setup, ids unique across all sets, at most four cases per source counted over every case
file, and the adapter expresses every scorable case (so `python bench/accuracy.py --cases
bench/data/extra_cases5.json` scores them all)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.test_extra_cases import BOUND_KINDS, VIEWS, check_sources_quoted, load
from tests.test_extra_cases2 import source_keys

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
NEW_SOURCE_SETS = (
    "extra_cases5.json",
    "extra_cases6.json",
    "extra_cases7.json",
    "extra_cases8.json",
    "extra_cases9.json",
    "extra_cases10.json",
    "extra_cases11.json",
    "extra_cases12.json",
    "extra_cases13.json",
    "extra_cases14.json",
    "extra_cases15.json",
    "extra_cases16.json",
    "extra_cases17.json",
    "extra_cases18.json",
    "extra_cases19.json",
    "extra_cases20.json",
    "extra_cases21.json",
    "extra_cases22.json",
    "extra_cases23.json",
    "extra_cases24.json",
    "extra_cases25.json",
    "extra_cases26.json",
    "extra_cases27.json",
)
# The smallest a set may be: extra_cases7 was gathered for the weak categories alone.
MIN_CASES = {"extra_cases7.json": 7}
SHARED = ROOT.parent / "shared" / "eval" / "vram_cases.json"
MAX_CASES_PER_SOURCE = 4


def publisher(case: dict) -> str:
    """The group bench/accuracy.py's leave-one-source-out takes out together: the
    repository (or the post, for blog repos)."""
    from checks.accuracy import source_group

    return source_group(case)


@pytest.fixture(scope="module", params=NEW_SOURCE_SETS)
def cases_and_others(request: pytest.FixtureRequest) -> tuple[list[dict], list[dict]]:
    """One new-source set and every other case (the other files and the shared set)."""
    mine = DATA / request.param
    others = [c for p in sorted(DATA.glob("*cases*.json")) if p != mine for c in load(p)]
    cases = load(mine)
    assert len(cases) >= MIN_CASES.get(request.param, 10), request.param
    return cases, others + (load(SHARED) if SHARED.exists() else [])


def test_the_file_is_one_list_of_cases_in_the_shared_schema(cases_and_others) -> None:
    cases, _ = cases_and_others
    assert isinstance(cases, list)
    for case in cases:
        assert case["model"]["params_b"] > 0, case["id"]
        measured = case["measured"]
        assert measured["what"] in VIEWS, case["id"]
        bound = measured.get("bound")
        assert (measured["value_gib"] or 0) > 0 or bound, case["id"]
        if bound:
            assert bound["kind"] in BOUND_KINDS and bound["limit_gib"] > 0, case["id"]


def test_every_case_names_its_source_quotes_it_and_states_its_setup(cases_and_others) -> None:
    cases, _ = cases_and_others
    check_sources_quoted(cases)
    for case in cases:
        assert case["gpu"] and case["workload"]["framework"], case["id"]


def test_ids_are_unique_across_all_sets(cases_and_others) -> None:
    cases, others = cases_and_others
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {c["id"] for c in others}


def test_no_source_is_shared_with_another_set(cases_and_others) -> None:
    """Neither the document nor its publisher (a repository already quoted elsewhere)."""
    cases, others = cases_and_others
    used = set().union(*(source_keys(c) for c in others)) | {publisher(c) for c in others}
    for case in cases:
        keys = source_keys(case) | {publisher(case)}
        assert not keys & used, (case["id"], keys & used)


def test_no_source_gives_more_than_four_cases_over_all_files(cases_and_others) -> None:
    cases, others = cases_and_others
    counts = Counter(publisher(c) for c in cases + others)
    mine = {publisher(c) for c in cases}
    assert all(counts[p] <= MAX_CASES_PER_SOURCE for p in mine), [
        (p, counts[p]) for p in mine if counts[p] > MAX_CASES_PER_SOURCE
    ]


def test_the_adapter_expresses_every_scorable_case(cases_and_others) -> None:
    from checks.accuracy import score

    cases, _ = cases_and_others
    rows = score(cases)
    assert rows and not [r for r in rows if "failed" in r]
    assert all("error" in r or "bound" in r for r in rows)
    assert len(rows) == sum(1 for c in cases if c["scorable"])
