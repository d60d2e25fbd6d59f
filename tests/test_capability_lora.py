"""'我有一张4090 最大能跑多大': the LoRA row is for the recipe people run (bf16 base,
gradient checkpointing, 1k sequences, batch 1) and says so; LLaMA-Factory's README table
puts 16-bit LoRA of a 7B model at about 16 GB, so a 24 GB card does 7B, not 3B."""

from __future__ import annotations

import pytest

from advisor.__main__ import main
from advisor.fit import card_fit


def test_a_24gb_card_fine_tunes_a_7b_model_with_lora() -> None:
    assert (card_fit("rtx-4090").finetune_b["lora"] or 0) >= 7
    assert (card_fit("rtx-3090").finetune_b["lora"] or 0) >= 7


def test_the_lora_row_states_its_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    main(["我有一张4090 最大能跑多大的模型", "--lang", "zh", "--offline"])
    zh = capsys.readouterr().out
    assert (
        "LoRA 7B（bf16 底座、梯度检查点、序列 1k）" in zh
        or "LoRA 8B（bf16 底座、梯度检查点、序列 1k）" in zh
    ), zh
    main(["biggest model on my 4090", "--lang", "en", "--offline"])
    en = capsys.readouterr().out
    assert "(bf16 base, gradient checkpointing, 1k sequences)" in en, en
