"""'What is the biggest model I can run on a 3090 / 24G' (3090 最大能跑多大的模型): the card's
fit list, per precision, from advisor/fit.py — for a named card or a memory size alone."""

from __future__ import annotations

import pytest

from advisor.__main__ import main
from advisor.fit import card_fit, fit_for_gpu
from advisor.parse import parse_query
from advisor.recommend import card_with


@pytest.mark.parametrize(
    ("line", "gpu_id", "vram"),
    [
        ("what's the biggest model I can run on a 3090", "rtx-3090", None),
        ("3090 最大能跑多大的模型", "rtx-3090", None),
        ("biggest model on 24G", None, 24.0),
        ("24g显存最大能跑多大的模型", None, 24.0),
        ("我的 4060 最多能跑多大", "rtx-4060", None),
        # "LLM" for "model": was asked "Which model, or how big?"
        ("i have an intel arc a770 16gb, what llms can i run?", "arc-a770", None),
        ("which llm can i run on my 4060 8gb", "rtx-4060", None),
    ],
)
def test_the_biggest_model_question_is_a_fit_question(line, gpu_id, vram) -> None:
    p = parse_query(line)
    assert p.ask_fit and p.workload is None and p.error is None
    assert (p.gpu_id, p.vram_gib) == (gpu_id, vram)


def test_a_memory_size_alone_fits_what_the_same_sized_card_fits() -> None:
    by_memory = fit_for_gpu(card_with(24))
    by_card = card_fit("rtx-3090")
    assert by_memory.inference_b == by_card.inference_b
    assert by_card.inference_b["bf16"] < by_card.inference_b["int8"] <= by_card.inference_b["int4"]


def test_the_cli_answers_per_precision_in_both_languages(capsys) -> None:
    """Before: the CLI raised on these lines (no workload, no error to render)."""
    assert main(["what's the biggest model I can run on a 3090"]) == 0
    en = capsys.readouterr().out
    assert "Inference, 4k context: BF16 8B · INT8 14B · INT4 27B" in en
    assert main(["biggest model on 24G", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "推理，4k 上下文：BF16 8B" in zh and "vram-24g" not in zh


def test_what_llms_can_i_run_lists_the_card_in_both_languages(capsys) -> None:
    line = "i have an intel arc a770 16gb, what llms can i run?"
    assert main([line]) == 0
    assert "What fits on Intel Arc A770 16GB" in capsys.readouterr().out
    assert main([line, "--lang", "zh"]) == 0
    assert "Intel Arc A770 16GB 能跑什么" in capsys.readouterr().out
