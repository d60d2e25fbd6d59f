"""The table of real lines (tests/data/parse_lines.toml): model, format, mode, runtime,
card and count as a lab member meant them."""

import tomllib
from pathlib import Path

import pytest

from advisor.parse import parse_query
from checks.real_lines import expected, reading

LINES = tomllib.loads((Path(__file__).parent / "data" / "parse_lines.toml").read_text())["line"]


def test_the_table_holds_at_least_400_lines_in_both_languages():
    assert len(LINES) >= 400
    chinese = [r for r in LINES if any("\u4e00" <= ch <= "\u9fff" for ch in r["t"])]
    assert 120 <= len(chinese) <= len(LINES) - 120
    assert len({r["t"] for r in LINES}) == len(LINES), "a line is listed twice"


@pytest.mark.parametrize("row", LINES, ids=[r["t"][:60] for r in LINES])
def test_line_reads_as_meant(row):
    assert reading(row["t"]) == expected(row)


@pytest.mark.parametrize("row", LINES, ids=[r["t"][:60] for r in LINES])
def test_line_survives_the_canonical_round_trip(row):
    """Answers are stored as their canonical line and re-read for buttons and follow-ups."""
    from advisor.parse import canonical_query

    p = parse_query(row["t"])
    again = parse_query(canonical_query(p))
    assert again.ok, canonical_query(p)
    assert again.workload == p.workload
    assert (again.gpu_id, again.gpu_count, again.vram_gib) == (p.gpu_id, p.gpu_count, p.vram_gib)
