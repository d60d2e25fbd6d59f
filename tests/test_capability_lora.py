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


def test_qlora_is_listed_where_a_smaller_model_fits_than_the_first_rung() -> None:
    """'我的3080能跑什么' read "QLoRA —" beside "LoRA 1.5B": the climb stopped at 0.5B, whose
    run (no gradient checkpointing below 1B) needs more than 1.5B's (checkpointed). QLoRA
    never needs more than LoRA of the same model, so a card that LoRA-tunes 1.5B QLoRA-tunes
    at least that at 2k tokens."""
    fit = card_fit("rtx-3080-10gb")
    assert fit.finetune_b["lora"] == 1.5
    assert (fit.finetune_b["qlora"] or 0) >= 1.5
