"""The trainers' own documented low-memory recipes come first among the fixes: kohya's 24 GB
SDXL full fine-tune (U-Net only, checkpointing, cached text encoder outputs and latents,
Adafactor) before "use LoRA", and the text embeddings precomputed apart with cached latents
before a bigger card for a diffusers LoRA (data/small_card_recipes.toml); the diffusers
examples' trainer scripts and kohya's second name read as what they are."""

from __future__ import annotations

import tomllib

import pytest

from advisor.catalog import DATA_DIR
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from tests.conftest import plain_answer

KOHYA_FULL = {
    "en": "sdxl full finetune with kohya sd-scripts on a titan rtx 24gb, batch 1 1024px, possible?",
    "zh": "kohya sd-scripts 全参微调 sdxl titan rtx 24g batch 1 1024 能跑吗",
}
DIFFUSERS_QLORA = {
    "zh": "用diffusers的train_dreambooth_lora_flux 做qlora 训练flux dev lora 4070 super 12g 能跑吗",
    "en": "diffusers train_dreambooth_lora_flux qlora on flux dev, 4070 super 12gb, will it run?",
}


def _rungs() -> dict[str, dict]:
    raw = tomllib.loads((DATA_DIR / "small_card_recipes.toml").read_text())
    return {r["code"]: r for r in raw["training"]}


def test_the_rungs_carry_their_sources() -> None:
    rungs = _rungs()
    full = rungs["full_unet_only_cached"]
    assert full["full"] and full["trainers"] == ["kohya"]
    assert full["set"]["optimizer"] == "adafactor" and "Tips for SDXL training" in full["source"]
    cached = rungs["cached_conditions"]
    assert (
        cached["set"]["conditions_precomputed_apart"] and "compute_embeddings" in cached["source"]
    )
    assert full["read_date"] == cached["read_date"] == "2026-12-07"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_kohyas_full_fine_tune_recipe_is_the_first_fix_before_lora(lang: str) -> None:
    parsed = parse_query(KOHYA_FULL[lang])
    assert parsed.workload is not None and parsed.workload.framework == "kohya"
    assert not any("sd-scripts" in word for word in parsed.ignored)
    rec = recommend_query(parsed)
    assert rec.verdict is not None and rec.verdict.fix == "full_unet_only_cached"
    text = plain_answer(KOHYA_FULL[lang], lang)
    verdict = text.splitlines()[2]
    assert "Adafactor" in verdict and "--mixed_precision fp16" in verdict
    assert "LoRA" not in verdict  # LoRA comes after, among the other changes


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_diffusers_qlora_gets_precomputed_embeddings_before_a_bigger_card(lang: str) -> None:
    parsed = parse_query(DIFFUSERS_QLORA[lang])
    w = parsed.workload
    assert w is not None and w.framework == "diffusers" and w.model == "flux.1-dev"
    assert not [word for word in parsed.ignored if "_" in word or "dreambooth" in word]
    rec = recommend_query(parsed)
    assert rec.verdict is not None and rec.verdict.fix == "cached_conditions"
    after = recommend_query(parsed.model_copy(update={"workload": w.model_copy(update=_cached())}))
    # HF's flux-qlora recipe: ~9 GB peak on a 4090; the precomputed run fits a 12 GB card
    assert after.result.estimate.total_bytes / 2**30 < 11.9
    text = plain_answer(DIFFUSERS_QLORA[lang], lang)
    assert "compute_embeddings.py" in text.splitlines()[2]


def _cached() -> dict:
    return dict(_rungs()["cached_conditions"]["set"])


def test_the_script_name_leaves_the_model_word_to_be_read() -> None:
    w = parse_query("train_dreambooth_lora_sdxl.py on a 3060 12gb").workload
    assert w is not None and w.model == "sdxl" and w.framework == "diffusers"
    assert w.mode.value == "lora"


KOHYA_FULL_16GB = {
    "en": "kohya sdxl full finetune 4060ti 16g",
    "zh": "kohya sdxl 全参微调 4060ti 16g 能跑吗",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_kohyas_full_fine_tune_recipe_names_the_16_bit_flags_it_is_sized_with(lang: str) -> None:
    """The recipe is sized with the U-Net's weights and gradients in 16 bits: the answer
    names --full_bf16 (sdxl_train.py keeps the U-Net in fp32 without it), and on a card
    without bf16 (Titan RTX, Turing) --full_fp16 instead."""
    rec = recommend_query(parse_query(KOHYA_FULL_16GB[lang]))
    assert rec.verdict is not None and rec.verdict.fix == "full_unet_only_cached"
    verdict = plain_answer(KOHYA_FULL_16GB[lang], lang).splitlines()[2]
    assert "--full_bf16 --mixed_precision bf16" in verdict and "--full_fp16" not in verdict
    turing = plain_answer(KOHYA_FULL[lang], lang).splitlines()[2]
    assert "--full_fp16 --mixed_precision fp16" in turing
    assert "--full_bf16 --mixed_precision bf16" not in turing


@pytest.mark.parametrize(
    ("line", "mode", "fmt"),
    [
        ("sdxl_train.py --full_bf16 on a 4060 ti 16gb", "full", "bf16"),
        ("用 sdxl_train.py --full_fp16 全参微调，T4 能跑吗", "full", "fp16"),
        ("sdxl_train_network.py on a 4060 8gb", "lora", None),
        ("kohya flux_train_network.py --fp8_base 3090 能跑吗", "lora", "fp8"),
    ],
)
def test_kohyas_script_names_and_16_bit_flags_are_read(
    line: str, mode: str, fmt: str | None
) -> None:
    """The script the recipe names (sdxl_train.py: the whole U-Net; *_train_network.py: a
    LoRA) is kohya's, and --full_bf16 / --full_fp16 the format the weights train in."""
    parsed = parse_query(line)
    w = parsed.workload
    assert w is not None and w.framework == "kohya" and w.mode.value == mode, line
    assert w.weights_format == fmt, line
    assert not parsed.ignored, (line, parsed.ignored)
