"""bench/data/extra_cases.json: the second, independent set of measured VRAM cases loads
with the shared schema, every case says where it comes from and quotes it, ids are unique,
no case re-uses a source of the shared set, and the adapter can express every one of them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from checks.accuracy import score

ROOT = Path(__file__).resolve().parent.parent
EXTRA = ROOT / "bench" / "data" / "extra_cases.json"
SHARED = ROOT.parent / "shared" / "eval" / "vram_cases.json"
CATEGORIES = {
    "llm_inference",
    "llm_training",
    "diffusion_inference",
    "diffusion_training",
    "classic_training",
    "classic_inference",
}
VIEWS = {"allocated", "reserved", "nvml", "software_reported", "unknown"}
BOUND_KINDS = {"fits_under", "oom_at", "greater_than", "less_than", "max_context_tokens"}
# The brief caps one source at about five cases so no single table dominates the set.
MAX_CASES_PER_SOURCE = 5


def load(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def source_key(case: dict) -> str:
    src = case["source"]
    return f"{src.get('repo')}|{src.get('path')}" if src.get("repo") else str(src.get("url"))


@pytest.fixture(scope="module")
def extra() -> list[dict]:
    return load(EXTRA)


def check_schema(cases: list[dict]) -> None:
    """One list of cases in the shared schema (also for bench/data/extra_cases2.json)."""
    assert isinstance(cases, list) and len(cases) >= 40
    for case in cases:
        assert case["category"] in CATEGORIES, case["id"]
        assert case["model"]["params_b"] > 0, case["id"]
        assert case["workload"]["mode"], case["id"]
        measured = case["measured"]
        assert measured["what"] in VIEWS, case["id"]
        bound = measured.get("bound")
        # A case is a value or a bound, never neither.
        assert (measured["value_gib"] or 0) > 0 or bound, case["id"]
        if bound:
            assert bound["kind"] in BOUND_KINDS and bound["limit_gib"] > 0, case["id"]


def check_sources_quoted(cases: list[dict]) -> None:
    """Every case names its source and quotes it (also for the third set)."""
    for case in cases:
        src = case["source"]
        assert src.get("url") or (src.get("repo") and src.get("path")), case["id"]
        assert src.get("title"), case["id"]
        assert len(case["quote"].strip()) >= 10, case["id"]
        assert len(case["notes"].strip()) >= 40, case["id"]


def test_the_file_is_one_list_of_cases_in_the_shared_schema(extra: list[dict]) -> None:
    check_schema(extra)


def test_every_case_names_its_source_and_quotes_it(extra: list[dict]) -> None:
    check_sources_quoted(extra)


def test_ids_are_unique_and_none_is_a_shared_id(extra: list[dict]) -> None:
    ids = [c["id"] for c in extra]
    assert len(ids) == len(set(ids))
    if SHARED.exists():
        assert not set(ids) & {c["id"] for c in load(SHARED)}


def test_no_case_reuses_a_source_of_the_shared_set(extra: list[dict]) -> None:
    if not SHARED.exists():
        pytest.skip("no shared cases here")
    shared = load(SHARED)
    shared_urls = {c["source"].get("url") for c in shared} - {None}
    shared_paths = {
        (c["source"].get("repo"), c["source"].get("path"))
        for c in shared
        if c["source"].get("repo") and c["source"].get("path")
    }
    for case in extra:
        src = case["source"]
        assert src.get("url") not in shared_urls, case["id"]
        assert (src.get("repo"), src.get("path")) not in shared_paths, case["id"]


def test_no_source_gives_more_than_five_cases(extra: list[dict]) -> None:
    counts = Counter(source_key(c) for c in extra)
    assert max(counts.values()) <= MAX_CASES_PER_SOURCE, counts.most_common(3)
    assert len(counts) >= 15


def test_the_adapter_expresses_every_scorable_case(extra: list[dict]) -> None:
    rows = score(extra)
    assert rows and not [r for r in rows if "failed" in r]
    assert all("error" in r or "bound" in r for r in rows)
