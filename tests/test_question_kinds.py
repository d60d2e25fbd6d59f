"""The table of kinds (tests/data/kinds_lines.toml): each line read as the kind of question
it asks (question_kind), with the budget, currency, cards, model and cues it names."""

import tomllib
from pathlib import Path

import pytest

from advisor.parse import parse_query

LINES = tomllib.loads((Path(__file__).parent / "data" / "kinds_lines.toml").read_text())["line"]


def test_the_table_holds_at_least_150_lines_in_both_languages_and_every_kind():
    assert len(LINES) >= 150
    chinese = [r for r in LINES if any("\u4e00" <= ch <= "\u9fff" for ch in r["t"])]
    assert 50 <= len(chinese) <= len(LINES) - 50
    assert len({r["t"] for r in LINES}) == len(LINES), "a line is listed twice"
    kinds = {r["kind"] for r in LINES}
    assert kinds == {
        "fit",
        "capability",
        "purchase",
        "compare",
        "out_of_scope",
        "serve",
        "train_time",
    }


@pytest.mark.parametrize("row", LINES, ids=[r["t"] for r in LINES])
def test_line_reads_as_its_kind(row: dict) -> None:
    p = parse_query(row["t"])
    assert p.question_kind == row["kind"], (row["t"], p.understood, p.ignored)
    if "budget" in row:
        assert p.budget is not None and not p.budget.per_hour, row["t"]
        assert p.budget.amount == row["budget"], row["t"]
    if "currency" in row:
        assert p.budget is not None and p.budget.currency == row["currency"], row["t"]
    if "card" in row:
        assert p.gpu_id == row["card"], (row["t"], p.gpu_id)
    if "other" in row:
        assert [g for g, _ in p.other_cards] == row["other"], row["t"]
    if "model" in row:
        assert p.workload is not None and p.workload.model == row["model"], row["t"]
    for cue in row.get("cues", []):
        assert cue in p.cues, (row["t"], p.cues)
