"""How the parser reads a line of the parse tables: the reading as a dict of the fields the
tables name, and the check of one real line against its `expect` (tests/test_parse_lines*.py
and eval/real_lines.py)."""

from __future__ import annotations

from advisor.parse import parse_query


def reading(text: str) -> dict:
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


def expected(row: dict) -> dict:
    keys = ("model", "params", "format", "runtime", "card", "count", "vram")
    return {"mode": row.get("mode", "inference"), **{k: row.get(k) for k in keys}}


def check_real_line(row: dict) -> None:
    """One row of a real-lines table read as its `expect` (or its keys) say; shared by the
    tests of each table and eval/real_lines.py."""
    p = parse_query(row["t"])
    expect = row.get("expect")
    if expect == "ask":
        # Nothing to size: the parser asks (no model / which one), it does not pick one.
        assert not p.ok and p.error is not None, (row["t"], p.workload)
        assert p.error.code in ("no_model", "unknown_model"), p.error
        assert not p.ask_fit
    elif expect == "fit":
        assert p.ask_fit and p.workload is None, (row["t"], p.error)
        assert p.gpu_id == row["card"]
    elif expect == "hub":
        assert p.error is not None and p.error.code == "unknown_model", p
        assert "/" in p.error.detail, p.error
    else:
        assert reading(row["t"]) == expected(row)
