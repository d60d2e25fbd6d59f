"""A Mac whose default GPU share (Metal's ~75% of unified memory) is short of the job, but
whose share raised by `sudo sysctl iogpu.wired_limit_mb` (the memory less ~8 GB) holds it:
the headline names the sysctl as the change that runs it, with the decode speed, and no
"does not run on this machine" or OOM note beside it. Qwen3-235B-A22B Q3_K_M on an M4 Max
128GB: 108 GiB of 96 GiB by default, 120 GiB raised."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

LINES = [
    ("m4 max 128g 跑 qwen3-235b-a22b q3 能跑吗 速度咋样", "zh", "这台机器上跑不了"),
    ("m4 max 128gb, can it run qwen3-235b-a22b q3, how fast", "en", "does not run"),
]


@pytest.mark.parametrize(("line", "lang", "never"), LINES)
def test_a_mac_short_only_of_its_default_limit_runs_after_the_sysctl(
    line: str, lang: str, never: str
) -> None:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, plain=True)
    head = text.splitlines()[1:3]
    assert rec.verdict is not None and rec.verdict.fix == "wired_limit:122880", rec.verdict
    assert "iogpu.wired_limit_mb=122880" in head[1] and "tok/s" in head[0], head
    assert never not in text and "OOM" not in text and not rec.rent_instead, text
    row = next(line for line in text.splitlines() if line.startswith("Q3_K_M"))
    assert "4k ⚠️" in row, row  # the grid's cell says what the headline says


def test_a_mac_the_raised_limit_does_not_hold_keeps_its_no() -> None:
    parsed = parse_query("m4 max 128gb, can it run qwen3-235b-a22b q4_k_m")
    rec = recommend_query(parsed, default_currency="USD")
    assert rec.verdict is not None and not (rec.verdict.fix or "").startswith("wired_limit")
