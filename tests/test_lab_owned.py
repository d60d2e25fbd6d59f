"""The pure side of lab mode: reading a /lab line, judging the machines a lab owns, and the
wording of both in Chinese and English."""

from __future__ import annotations

import re

import pytest

from advisor.parse import parse_query
from advisor.parse.machines import parse_machine_line
from advisor.recommend.owned import Machine, judge_machines
from advisor.render import render
from tests.test_answer_chinese import ALLOWED, _names, _words

NODE = Machine(
    name="node1", gpu_id="a100-40gb-pcie", count=4, price_per_card_hour=3, currency="CNY"
)
WS1 = Machine(name="ws-1", gpu_id="rtx-3090", count=1)
WS2 = Machine(name="ws-2", gpu_id="rtx-3090", count=1)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("node1 4x a100 40g", [("node1", "a100-40gb-sxm", 4, None, None)]),
        (
            "node1 4x A100 40G ¥3/h shared, book in the sheet",
            [("node1", "a100-40gb-sxm", 4, 3.0, "shared, book in the sheet")],
        ),
        (
            "两台 3090 工作站",
            [("RTX 3090-1", "rtx-3090", 1, None, None), ("RTX 3090-2", "rtx-3090", 1, None, None)],
        ),
        (
            "ws 两台 3090 工作站 每卡每小时2元",
            [("ws-1", "rtx-3090", 1, 2.0, None), ("ws-2", "rtx-3090", 1, 2.0, None)],
        ),
        (
            "GPU服务器 4张A100 3元/卡时 预约请填表",
            [("GPU服务器", "a100-80gb-pcie", 4, 3.0, "预约请填表")],
        ),
        (
            "Node-A: 2x RTX 4090, note: ask Li first",
            [("Node-A", "rtx-4090", 2, None, "ask Li first")],
        ),
        ("big 8x h100 $2.5 per card-hour", [("big", "h100-sxm", 8, 2.5, None)]),
        ("box 3090", [("box", "rtx-3090", 1, None, None)]),
    ],
)
def test_a_lab_line_names_machines_cards_counts_prices_and_notes(line: str, expected: list) -> None:
    read = parse_machine_line(line)
    assert read.error is None
    got = [(m.name, m.gpu_id, m.count, m.price_per_card_hour, m.note) for m in read.machines]
    assert got == expected


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("", "empty"),
        ("hello", "no_card"),
        ("24g", "memory_only"),
        ("x 100x a100", "too_many_cards"),
        ("a" * 400, "too_long"),
    ],
)
def test_a_line_without_a_usable_card_says_why(line: str, error: str) -> None:
    assert parse_machine_line(line).error == error


def test_the_job_goes_to_the_smallest_machine_that_runs_it() -> None:
    own = judge_machines(parse_query("qwen2.5-7b int4").workload, [NODE, WS1, WS2])
    assert own is not None and own.best is not None
    assert own.best.machine.name == "ws-1" and own.best.cards == 1


def test_13b_fp16_runs_on_one_a100_40g_and_not_on_a_3090() -> None:
    own = judge_machines(parse_query("13b fp16").workload, [WS1, NODE])
    assert own is not None and own.best is not None
    assert (own.best.machine.name, own.best.cards, own.best.verdict.state) == ("node1", 1, "fits")
    assert own.best.cost_per_hour == 3.0
    ws = next(f for f in own.machines if f.machine.name == "ws-1")
    assert ws.verdict.state == "no_fit" and ws.verdict.fix == "quantize:int8"
    assert ws.option.per_gpu_bytes == own.best.option.per_gpu_bytes  # the same per-card figure


def test_70b_fp16_needs_all_four_cards_of_the_node_and_says_what_gives_room() -> None:
    own = judge_machines(parse_query("llama-3.3-70b fp16").workload, [NODE])
    assert own is not None and own.best is not None
    assert own.best.cards == 4 and own.best.verdict.state == "tight"
    assert own.best.verdict.fix is not None and not own.best.verdict.fix.startswith("cards:")
    assert own.best.cost_per_hour == 12.0


def test_when_no_machine_runs_it_there_is_no_best_and_never_a_more_cards_fix() -> None:
    own = judge_machines(parse_query("llama-3.1-405b fp16").workload, [NODE, WS1])
    assert own is not None and own.best is None
    assert own.machines[0].machine.name == "node1"  # the closest first
    for f in own.machines:
        assert all(not c.startswith("cards:") for c in f.fixes)


def test_a_job_without_a_memory_formula_has_no_lab_section() -> None:
    assert judge_machines(parse_query("blender 渲染").workload, [NODE]) is None


def test_lab_wording_in_chinese_carries_no_english() -> None:
    allowed = {w.lower() for a in ALLOWED for w in _words(a)} | {n.lower() for n in _names()}
    allowed |= {"node1", "ws"}  # the machine names typed by the lab
    for q in ("13b fp16", "llama-3.3-70b fp16", "llama-3.1-405b fp16", "qwen2.5-7b lora"):
        own = judge_machines(parse_query(q).workload, [NODE, WS1, WS2])
        for body in (
            render("lab_first", "zh", plain=True, own=own, group=True, chosen=True),
            render("lab_first", "zh", plain=True, own=own, group=False, chosen=False),
        ):
            leaks = [w for w in _words(body) if w.lower() not in allowed]
            assert not leaks, (q, leaks)
    assert re.search(r"[\u4e00-\u9fff]", body)


def test_the_inline_answer_in_chinese_carries_no_english() -> None:
    from advisor.recommend import recommend_query

    allowed = {w.lower() for a in ALLOWED for w in _words(a)} | {n.lower() for n in _names()}
    for q in ("13b fp16", "qwen2.5-72b int4 32k on 4090", "sdxl 1024", "blender 渲染"):
        parsed = parse_query(q)
        rec = recommend_query(parsed, default_currency="CNY")
        body = render("inline", "zh", plain=True, rec=rec, parsed=parsed)
        leaks = [w for w in _words(body) if w.lower() not in allowed]
        assert not leaks, (q, leaks)
