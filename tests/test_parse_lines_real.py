"""Held-out real lines (tests/data/parse_lines_real.toml): questions people posted in public
issue threads, verbatim, each with its source. Read as the person meant them, or asked back
when the line names no model; never guessed."""

import re
import tomllib
from pathlib import Path

import pytest

from advisor.parse import parse_query
from checks.real_lines import check_real_line

LINES = tomllib.loads((Path(__file__).parent / "data" / "parse_lines_real.toml").read_text())[
    "line"
]
_SOURCE = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+")


def xfail_marks(row: dict) -> list:
    # A misreading not fixed yet stays in the table, visible: strict, so a fix must drop it.
    return [pytest.mark.xfail(reason=row["known"], strict=True)] if "known" in row else []


def reading_cases(rows: list[dict]) -> list:
    """A table's lines as test cases, each marked with its known misreading if any."""
    return [pytest.param(r, id=r["t"][:60], marks=xfail_marks(r)) for r in rows]


def round_trip_cases(rows: list[dict]) -> list:
    """The lines whose reading is a question (no `expect`: not an error or a refusal)."""
    return [pytest.param(r, id=r["t"][:60]) for r in rows if not r.get("expect")]


CASES = reading_cases(LINES)


def check_table(lines: list[dict], low: int, high: int) -> None:
    """A table of real lines: its size, about half Chinese, no line twice, each with its
    issue or pull request, expectations of the known kinds."""
    assert low <= len(lines) <= high
    chinese = [r for r in lines if re.search(r"[\u4e00-\u9fff]", r["t"])]
    assert 0.35 <= len(chinese) / len(lines) <= 0.65
    assert len({r["t"] for r in lines}) == len(lines), "a line is listed twice"
    for row in lines:
        assert _SOURCE.fullmatch(row["src"]), row
    assert {r.get("expect") for r in lines} <= {None, "ask", "fit", "hub"}


def test_the_real_table_is_sourced_and_in_both_languages():
    check_table(LINES, 150, 250)


@pytest.mark.parametrize("row", CASES)
def test_real_line_reads_as_meant(row):
    check_real_line(row)


@pytest.mark.parametrize("row", round_trip_cases(LINES))
def test_real_line_survives_the_canonical_round_trip(row):
    check_round_trip(row["t"])


def check_round_trip(text: str) -> None:
    """The bot stores an answer as its canonical line and re-reads it for buttons."""
    from advisor.parse import canonical_query

    p = parse_query(text)
    if not p.ok:
        pytest.skip("not read (a known line)")
    again = parse_query(canonical_query(p))
    assert again.ok, canonical_query(p)
    assert again.workload == p.workload
    assert (again.gpu_id, again.gpu_count, again.vram_gib) == (p.gpu_id, p.gpu_count, p.vram_gib)
