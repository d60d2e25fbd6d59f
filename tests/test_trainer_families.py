"""A trainer's own small-card rung is offered, when no trainer is named, only for a model
that trainer trains (data/small_card_recipes.toml [trainer_families]): kohya's
--network_train_unet_only is no fix for a CogVideoX DiT, which neither sd-scripts nor
musubi-tuner trains. FluxGym's own presets: tests/test_fluxgym_presets.py."""

from __future__ import annotations

import pytest

from tests.conftest import answers_both

COGVIDEOX = {
    "zh": "lora 训练 cogvideox-5b 单卡4090 够吗",
    "en": "lora training cogvideox-5b on one 4090, enough?",
}
SDXL = {
    "zh": "sdxl lora 训练 1024 rtx 3060 8g 能跑吗",
    "en": "sdxl lora training 1024px on an 8gb rtx 3060, ok?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_kohyas_unet_only_flag_is_not_offered_for_a_model_kohya_does_not_train(lang: str):
    _, texts = answers_both(COGVIDEOX[lang])
    assert "--network_train_unet_only" not in texts[lang]
    assert "CogVideoX-5B" in texts[lang]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_kohyas_rungs_stay_for_a_model_kohya_trains(lang: str):
    _, texts = answers_both(SDXL[lang])
    assert "--network_train_unet_only" in texts[lang]


def test_the_default_way_names_no_empty_trainer():
    """With no trainer named, the headline says 'the default', not "( default" (en); zh
    reads as it did."""
    _, texts = answers_both(COGVIDEOX["en"])
    assert "( default" not in texts["en"]
    assert "(the default of gradient checkpointing on" in texts["en"]
    _, texts = answers_both(COGVIDEOX["zh"])
    assert "（默认打开梯度检查点" in texts["zh"]
