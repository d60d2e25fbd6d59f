"""The table of kinds (tests/data/kinds_lines.toml): each line read as the kind of question
it asks (question_kind), with the budget, currency, cards, model and cues it names, and one
key value of its answer at least (`greeting` of small talk, the first plan card …)."""

import tomllib
from pathlib import Path
from typing import Any

import pytest

from advisor.kinds import answer_kind
from advisor.parse import ParsedQuery, parse_query

LINES = tomllib.loads((Path(__file__).parent / "data" / "kinds_lines.toml").read_text())["line"]
# What a row may assert beyond its kind (read from the line, or from its answer)
KEYS = {"budget", "currency", "card", "other", "model", "cues", "count", "vram", "unknown_card"}
KEYS |= {"params", "mode", "error"}
ANSWER_KEYS = {"greeting", "plan", "problem"}


def test_the_table_holds_at_least_150_lines_in_both_languages_and_every_kind():
    assert len(LINES) >= 150
    chinese = [r for r in LINES if any("\u4e00" <= ch <= "\u9fff" for ch in r["t"])]
    assert 50 <= len(chinese) <= len(LINES) - 50
    assert len({r["t"] for r in LINES}) == len(LINES), "a line is listed twice"
    bare = [r["t"] for r in LINES if not set(r) & (KEYS | ANSWER_KEYS)]
    assert not bare, f"each line asserts a value beside its kind: {bare}"
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
    if "count" in row:
        assert p.gpu_count == row["count"], (row["t"], p.gpu_count)
    if "vram" in row:
        assert p.vram_gib == row["vram"], (row["t"], p.vram_gib)
    if "params" in row:
        assert p.workload is not None and p.workload.params_b == row["params"], row["t"]
    if "mode" in row:
        assert p.workload is not None and p.workload.mode.value == row["mode"], row["t"]
    if "error" in row:
        assert p.error is not None and p.error.code == row["error"], (row["t"], p.error)
    if "unknown_card" in row:
        assert p.unknown_card == row["unknown_card"], (row["t"], p.unknown_card)
    if set(row) & ANSWER_KEYS:
        _answer_holds(row, p)


def _answer_holds(row: dict, p: ParsedQuery) -> None:
    a: Any = answer_kind(p, "CNY")
    if "greeting" in row:
        assert a is not None and a.greeting == row["greeting"], row["t"]
    if "problem" in row:
        assert a is not None and a.problem == row["problem"], (row["t"], a.problem)
    if "plan" in row:  # the plan's cards as (id, count), first line first
        assert a is not None and a.plan is not None, (row["t"], a.problem)
        got = [[ln.gpu_id, ln.count] for ln in a.plan.lines]
        assert got == row["plan"], (row["t"], got)
