"""FluxGym (cocktailpeanut/fluxgym) writes kohya's flux_train_network.py from one of its VRAM
presets (app.py gen_sh: 20G AdamW8bit, 16G Adafactor, 12G Adafactor with --split_mode; every
preset --fp8_base, gradient checkpointing, cached text encoder outputs and latents, batch 1):
named, the answer runs the largest preset that fits the user's card, sized with that preset's
flags, and offers no fix FluxGym does not have (data/small_card_recipes.toml fluxgym_*)."""

from __future__ import annotations

import pytest

from tests.conftest import answers_both

TWELVE = {
    "zh": "用 fluxgym 训练 flux lora，3080 12g 能行吗",
    "en": "fluxgym flux lora training on a 12gb rtx 3080, doable?",
}
TWENTY_FOUR = {
    "zh": "fluxgym 训练 flux lora 4090 够吗",
    "en": "fluxgym flux lora training on a 4090, enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_12gb_card_gets_fluxgyms_12g_preset_with_split_mode(lang: str):
    rec, texts = answers_both(TWELVE[lang])
    w = rec.result.workload
    assert w.framework == "fluxgym"
    assert w.split_mode and w.optimizer is not None and w.optimizer.value == "adafactor"
    assert "12G" in texts[lang] and "--split_mode" in texts[lang]
    assert "--blocks_to_swap" not in texts[lang]  # no FluxGym preset swaps blocks
    assert rec.named.per_gpu_bytes < 11.9 * 2**30  # fits the usable memory


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_24gb_card_gets_fluxgyms_20g_preset(lang: str):
    rec, texts = answers_both(TWENTY_FOUR[lang])
    w = rec.result.workload
    assert not w.split_mode and w.optimizer is not None and w.optimizer.value == "adamw_8bit"
    assert "20G" in texts[lang] and "adamw8bit" in texts[lang]
    assert "ai-toolkit" not in texts[lang]


def test_fluxgym_checkpoints_as_its_presets_write():
    rec, _ = answers_both("fluxgym flux lora training on an a100 80g")
    said = {a.field: a.value for a in rec.result.assumed}
    assert said["gradient_checkpointing"] == "on"
