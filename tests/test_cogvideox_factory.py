"""finetrainers (and cogvideox-factory, its earlier name) leaves gradient checkpointing off
unless told: a CogVideoX-5B LoRA on a 24 GB card was 112 GiB with no fix; the small-card
ladder now offers checkpointing with the conditions precomputed and the latents cached
together (data/small_card_recipes.toml cached_conditions_checkpointed)."""

from __future__ import annotations

import pytest

from tests.conftest import answers_both, plain_answer

Q = {
    "zh": "cogvideox-factory 训练 cogvideox-5b lora 单卡4090 够吗",
    "en": "cogvideox-factory cogvideox-5b lora training on one 4090, enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_finetrainers_gets_checkpointing_and_cached_conditions_on_a_24gb_card(lang: str):
    rec, texts = answers_both(Q[lang])
    assert rec.result.workload.framework == "finetrainers"
    assert rec.recipe == "cached_conditions_checkpointed"
    assert rec.named.per_gpu_bytes < 23.8 * 2**30
    assert "--gradient_checkpointing" in texts[lang]
    assert "--precompute_conditions" in texts[lang]


def test_a_stack_name_ending_in_s_takes_a_bare_apostrophe() -> None:
    """'finetrainers's default' read wrong in English; the possessive follows the name."""
    text = plain_answer("finetrainers cogvideox-5b lora 4090", "en")
    assert "finetrainers' default" in text and "finetrainers's" not in text
