"""Second held-out set of real lines (tests/data/parse_lines_real2.toml), gathered after the
first set became the dev set: the honest figure for how real questions are read."""

import re
import tomllib
from pathlib import Path

import pytest

from tests.test_parse_lines_real import (
    check_real_line,
    check_round_trip,
    check_table,
    reading_cases,
    round_trip_cases,
)

DATA = Path(__file__).parent / "data"
LINES = tomllib.loads((DATA / "parse_lines_real2.toml").read_text())["line"]
# parse_lines_real3.toml: gathered after the parser changes, measured once, never tuned on
LATER = tomllib.loads((DATA / "parse_lines_real3.toml").read_text())["line"]
DEV = tomllib.loads((DATA / "parse_lines_real.toml").read_text())["line"]
_SOURCE = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+")


def test_the_fresh_table_is_sourced_bilingual_and_apart_from_the_dev_set():
    check_table(LINES, 60, 100)
    # Held out means held out: no line, and no thread, shared with the dev set.
    assert not {r["t"] for r in LINES} & {r["t"] for r in DEV}
    assert not {r["src"] for r in LINES} & {r["src"] for r in DEV}


def test_the_later_table_is_sourced_bilingual_and_apart_from_both_others():
    assert 20 <= len(LATER) <= 40
    chinese = [r for r in LATER if re.search(r"[\u4e00-\u9fff]", r["t"])]
    assert 0.35 <= len(chinese) / len(LATER) <= 0.65
    for row in LATER:
        assert _SOURCE.fullmatch(row["src"]), row
    assert not {r["src"] for r in LATER} & {r["src"] for r in DEV + LINES}


@pytest.mark.parametrize("row", reading_cases(LINES + LATER))
def test_fresh_real_line_reads_as_meant(row):
    check_real_line(row)


@pytest.mark.parametrize("row", round_trip_cases(LINES + LATER))
def test_fresh_real_line_survives_the_canonical_round_trip(row):
    check_round_trip(row["t"])
