"""A line naming two models, each with its own task word: the first model keeps its own
("whisper转录和yolo训练" transcribes with Whisper; the training is YOLO's)."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query


@pytest.mark.parametrize(
    "question",
    [
        "预算2万 组里主要跑whisper转录和yolo训练 买什么卡",
        "budget 20k cny, our group mainly runs whisper transcription and yolo training, which card to buy",
        "预算2万 yolo训练和whisper转录 买什么卡",
    ],
)
def test_a_named_transcription_stays_inference_beside_another_models_training(
    question: str,
) -> None:
    """Before: Whisper large-v3 sized as a full fine-tune: a 2x 3090, 1200 W build."""
    p = parse_query(question)
    assert p.question_kind == "purchase"
    assert p.workload is not None and p.workload.mode.value == "inference"
    assert any(a.startswith("second_model = ") for a in p.assumed)
    rec = recommend_query(p, "CNY")
    assert rec.result.estimate.total_bytes < 12 * 2**30  # type: ignore[union-attr]


def test_one_training_word_for_both_models_still_trains() -> None:
    p = parse_query("whisper 和 yolo 训练")
    assert p.workload is not None and p.workload.mode.value == "full"
