"""Fourth held-out set of real lines (tests/data/parse_lines_real4.toml), gathered for the
parse5 round before its parser changes: how lines nobody tuned on are read, then (after that
round) which of their misreadings were fixed as families of spellings. With it, the fifth
(parse_lines_real5.toml), gathered after those changes and never tuned on."""

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
LINES = tomllib.loads((DATA / "parse_lines_real4.toml").read_text())["line"]
# parse_lines_real5.toml: gathered after the parse5 changes, measured once, never tuned on
AFTER = tomllib.loads((DATA / "parse_lines_real5.toml").read_text())["line"]
EARLIER = [
    row
    for name in ("parse_lines_real.toml", "parse_lines_real2.toml", "parse_lines_real3.toml")
    for row in tomllib.loads((DATA / name).read_text())["line"]
]


def test_the_fourth_table_is_sourced_bilingual_and_apart_from_the_earlier_ones():
    check_table(LINES, 60, 100)
    # Held out means held out: no line, and no thread, shared with an earlier table.
    assert not {r["t"] for r in LINES} & {r["t"] for r in EARLIER}
    assert not {r["src"] for r in LINES} & {r["src"] for r in EARLIER}


def test_the_fifth_table_is_sourced_bilingual_and_apart_from_every_earlier_one():
    check_table(AFTER, 20, 40)
    earlier = EARLIER + LINES
    assert not {r["t"] for r in AFTER} & {r["t"] for r in earlier}
    assert not {r["src"] for r in AFTER} & {r["src"] for r in earlier}


@pytest.mark.parametrize("row", reading_cases(LINES + AFTER))
def test_fourth_table_line_reads_as_meant(row):
    check_real_line(row)


@pytest.mark.parametrize("row", round_trip_cases(LINES + AFTER))
def test_fourth_table_line_survives_the_canonical_round_trip(row):
    check_round_trip(row["t"])
