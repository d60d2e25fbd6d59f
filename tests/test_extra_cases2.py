"""bench/data/extra_cases2.json: the third, independent set of measured VRAM cases loads with
the shared schema, every case says where it comes from and quotes it, ids are unique across
all three sets, no source (URL, repository + path, issue or PR thread) is shared with the
shared set or the second set, and the adapter can express every scorable case."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from checks.accuracy import score
from tests.test_extra_cases import CATEGORIES, check_schema, check_sources_quoted, load

ROOT = Path(__file__).resolve().parent.parent
THIRD = ROOT / "bench" / "data" / "extra_cases2.json"
SECOND = ROOT / "bench" / "data" / "extra_cases.json"
SHARED = ROOT.parent / "shared" / "eval" / "vram_cases.json"
# The brief caps one source at four cases so that no single table dominates the set.
MAX_CASES_PER_SOURCE = 4


def source_keys(case: dict) -> set[str]:
    """Every name a source goes by: its URL without the #fragment (a README quoted at two
    anchors is one source), its repository + path, and an issue or PR thread's number."""
    src = case["source"]
    keys = set()
    if src.get("url"):
        url = src["url"].split("#")[0].rstrip("/")
        keys.add(url)
        if thread := re.search(r"github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url):
            keys.add(f"thread:{thread.group(1)}#{thread.group(2)}")
    if src.get("repo") and src.get("path"):
        keys.add(f"{src['repo']}|{src['path']}")
    return keys


@pytest.fixture(scope="module")
def third() -> list[dict]:
    return load(THIRD)


def test_the_file_is_one_list_of_cases_in_the_shared_schema(third: list[dict]) -> None:
    check_schema(third)


def test_every_case_names_its_source_and_quotes_it(third: list[dict]) -> None:
    check_sources_quoted(third)
    for case in third:
        if not case["scorable"]:
            # An unscorable case says why in its notes.
            assert len(case["notes"]) >= 80, case["id"]


def test_ids_are_unique_across_all_three_sets(third: list[dict]) -> None:
    ids = [c["id"] for c in third]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {c["id"] for c in load(SECOND)}
    if SHARED.exists():
        assert not set(ids) & {c["id"] for c in load(SHARED)}


def test_no_source_is_shared_with_the_other_two_sets(third: list[dict]) -> None:
    others = load(SECOND) + (load(SHARED) if SHARED.exists() else [])
    used = set().union(*(source_keys(c) for c in others))
    for case in third:
        assert not source_keys(case) & used, (case["id"], source_keys(case) & used)


def test_no_source_gives_more_than_four_cases(third: list[dict]) -> None:
    counts = Counter(min(source_keys(c)) for c in third)
    assert max(counts.values()) <= MAX_CASES_PER_SOURCE, counts.most_common(3)
    assert len(counts) >= 15


def test_every_category_is_represented(third: list[dict]) -> None:
    counts = Counter(c["category"] for c in third)
    assert set(counts) == CATEGORIES, counts


def test_the_adapter_expresses_every_scorable_case(third: list[dict]) -> None:
    rows = score(third)
    assert rows and not [r for r in rows if "failed" in r]
    assert all("error" in r or "bound" in r for r in rows)
    assert len(rows) == sum(1 for c in third if c["scorable"])
