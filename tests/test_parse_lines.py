"""The table of real lines (tests/data/parse_lines.toml): model, format, mode, runtime,
card and count as a lab member meant them."""

import tomllib
from pathlib import Path

import pytest

from advisor.parse import parse_query

LINES = tomllib.loads((Path(__file__).parent / "data" / "parse_lines.toml").read_text())["line"]


def _reading(text: str) -> dict:
    p = parse_query(text)
    assert p.ok, (text, p.error)
    w = p.workload
    return {
        "model": w.model,
        "params": w.params_b,
        "format": w.weights_format,
        "mode": w.mode.value,
        "runtime": w.runtime.value if w.runtime else None,
        "card": p.gpu_id,
        "count": p.gpu_count,
        "vram": p.vram_gib,
    }


def _expected(row: dict) -> dict:
    keys = ("model", "params", "format", "runtime", "card", "count", "vram")
    return {"mode": row.get("mode", "inference"), **{k: row.get(k) for k in keys}}


def test_the_table_holds_at_least_400_lines_in_both_languages():
    assert len(LINES) >= 400
    chinese = [r for r in LINES if any("\u4e00" <= ch <= "\u9fff" for ch in r["t"])]
    assert 120 <= len(chinese) <= len(LINES) - 120
    assert len({r["t"] for r in LINES}) == len(LINES), "a line is listed twice"


@pytest.mark.parametrize("row", LINES, ids=[r["t"][:60] for r in LINES])
def test_line_reads_as_meant(row):
    assert _reading(row["t"]) == _expected(row)
