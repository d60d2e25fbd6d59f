"""Two or more cards named as alternatives ("3090或4090", "a100 vs h100"): the second was
listed as "not understood" and the answer covered the first only — half the question
unanswered. Now each other card gets its own line, judged as the named card would be."""

from __future__ import annotations

import pytest

from advisor.parse import canonical_query, parse_query
from advisor.recommend import recommend_query
from advisor.render import render
from advisor.report import recommendation_json


@pytest.mark.parametrize(
    ("line", "first", "others"),
    [
        ("3090或4090 跑 qwen2.5-14b", "rtx-3090", [("rtx-4090", None)]),
        ("3090 还是 4090 跑 qwen2.5-14b 好", "rtx-3090", [("rtx-4090", None)]),
        ("qwen2.5-14b on a 3090 or a 4090?", "rtx-3090", [("rtx-4090", None)]),
        ("两张3090还是一张4090 跑 qwen2.5-32b awq", "rtx-3090", [("rtx-4090", 1)]),
        ("16x V100 or 8x A100 for llama-65b finetune", "tesla-v100", [("a100-80gb-pcie", 8)]),
    ],
)
def test_other_cards_are_read_and_round_trip(line: str, first: str, others: list) -> None:
    p = parse_query(line)
    assert p.ok and p.gpu_id == first and p.other_cards == others, p
    assert not {"4090", "a100", "8x"} & set(p.ignored)
    again = parse_query(canonical_query(p))
    assert (again.gpu_id, again.gpu_count, again.other_cards) == (p.gpu_id, p.gpu_count, others)


def test_one_card_and_its_memory_or_count_are_no_alternatives() -> None:
    for line in (
        "8 * 4090,256G memory 跑 qwen2.5-72b",
        "2x3090 跑 qwen2.5-32b",
        "a100 80g 跑 qwen2.5-72b",
    ):
        assert parse_query(line).other_cards == [], line


def test_each_card_named_gets_the_verdict_it_gets_when_asked_alone() -> None:
    q = "两张3090还是一张4090 跑 qwen2.5-32b awq"
    parsed = parse_query(q)
    rec = recommend_query(parsed)
    alone = recommend_query(parse_query("一张4090 跑 qwen2.5-32b awq"))
    [also] = rec.also
    assert (also.option.gpu_id, also.option.count) == ("rtx-4090", 1)
    assert also.verdict.state == alone.verdict.state  # type: ignore[union-attr]
    assert also.option.per_gpu_bytes == alone.named.per_gpu_bytes  # type: ignore[union-attr]
    zh = render("answer", "zh", rec=rec, parsed=parsed, canonical=q, plain=True)
    en = render("answer", "en", rec=rec, parsed=parsed, canonical=q, plain=True)
    assert "你也提到的 1× GeForce RTX 4090" in zh
    assert "The 1× GeForce RTX 4090 you also named" in en
    [row] = recommendation_json(rec)["also_named"]
    assert (
        row["named_gpu"]["gpu_id"] == "rtx-4090" and row["verdict"]["state"] == also.verdict.state
    )


def test_a_single_card_question_has_no_also_line() -> None:
    q = "qwen2.5-14b 4090"
    parsed = parse_query(q)
    rec = recommend_query(parsed)
    assert rec.also == []
    assert "also named" not in render(
        "answer", "en", rec=rec, parsed=parsed, canonical=q, plain=True
    )
