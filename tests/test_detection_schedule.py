"""A detection schedule named by its length ("mask rcnn r50 fpn 1x") is read as its epochs
(mmdet schedule_1x.py max_epochs 12, 2x 24, 3x 36; data/vocab/words.toml [schedules]), said
among the assumptions, never listed as not understood; "2x 3090" stays two cards."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

LINES = [
    ("mmdet 训练 mask rcnn r50 fpn 1x 单卡 batch 2 2080ti 11g 够吗", "zh", "1x 训练计划", "没看懂"),
    (
        "mmdet mask rcnn r50 fpn 1x on one 2080ti 11g, batch 2, enough?",
        "en",
        "the 1x schedule",
        "Not understood",
    ),
]


@pytest.mark.parametrize(("line", "lang", "said", "ignored"), LINES)
def test_the_schedule_is_understood(line: str, lang: str, said: str, ignored: str) -> None:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, plain=True)
    assert said in text and ignored not in text, text


@pytest.mark.parametrize(("word", "epochs"), [("1x", 12), ("2x", 24), ("3x", 36)])
def test_the_schedule_sets_the_epochs_of_a_how_long_question(word: str, epochs: int) -> None:
    parsed = parse_query(f"detectron2 faster rcnn r50 fpn {word} coco, how long on 2x 3090")
    assert parsed.workload.train_images == 118_287 * epochs
    assert parsed.workload.num_gpus == 2
