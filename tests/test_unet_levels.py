"""A UNet's training activations are summed over its resolution levels (diffusers
UNet2DConditionModel, each level at a quarter of the grid above it and its own
block_out_channels), from the catalog's copy of each unet/config.json
(advisor/memory/unet_levels.py, data/models.toml)."""

from __future__ import annotations

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.memory.unet_levels import (
    BLOCK_BYTES,
    RESNET_BYTES,
    UP_RESNET_EXTRA_BYTES,
    WRAPPER_BYTES,
    unet_levels,
    unet_training_activations,
)
from advisor.models.choices import Mode, Optimizer
from advisor.models.workload import Workload


def spec(model: str):  # type: ignore[no-untyped-def]
    s = find_model(model)
    assert s is not None and s.diffusion is not None
    return s.diffusion


def test_sd_1x_levels_follow_its_unet_config() -> None:
    """runwayml/stable-diffusion-v1-5 unet/config.json: block_out_channels [320, 640,
    1280, 1280], layers_per_block 2, cross-attention at the first three levels."""
    d = spec("sd-1.5")
    levels = unet_levels(d, 64 * 64)
    assert levels is not None
    assert [lv.channels for lv in levels] == [320, 640, 1280, 1280, 1280]
    assert [lv.tokens for lv in levels] == [4096, 1024, 256, 64, 64]
    # down 2 + up 3 Transformer2DModels of one block at an attention level, none at the last
    assert [lv.blocks for lv in levels] == [5, 5, 5, 0, 1]
    assert [lv.resnets + lv.up_resnets for lv in levels] == [5, 5, 5, 5, 2]


def test_sdxl_has_no_attention_at_its_first_level_and_ten_layers_at_its_last() -> None:
    """stabilityai/stable-diffusion-xl-base-1.0: transformer_layers_per_block [1, 2, 10]
    on DownBlock2D + 2 x CrossAttnDownBlock2D (the first level has none), mid block 10."""
    levels = unet_levels(spec("sdxl"), 128 * 128)
    assert levels is not None
    assert [lv.blocks for lv in levels] == [0, 10, 50, 10]


def test_the_first_level_is_sized_from_the_per_block_saved_tensors() -> None:
    levels = unet_levels(spec("sd-1.5"), 4096)
    assert levels is not None
    first = levels[0]
    per_channel = (
        2 * RESNET_BYTES
        + 3 * (RESNET_BYTES + UP_RESNET_EXTRA_BYTES)
        + 5 * BLOCK_BYTES
        + 5 * WRAPPER_BYTES
    )
    top = first.tokens * first.channels * per_channel
    full, _ = unet_training_activations(spec("sd-1.5"), 4096, False) or (0.0, 0)
    # each level down has a quarter of the tokens and twice the channels (to 1280): half
    # the level above, so the whole is under twice the first level
    assert 1.5 * top < full < 2 * top


def test_sd_1x_dreambooth_without_checkpointing_holds_under_a_gib_of_activations() -> None:
    """512 px (a 64 x 64 latent grid), batch 1: summed per level, not 273 equal blocks of
    512 channels at 4,096 tokens (21 GiB)."""
    est = estimate(
        Workload(
            model="sd-1.5",
            mode=Mode.full,
            image_width=512,
            image_height=512,
            batch_size=1,
            optimizer=Optimizer.adamw_8bit,
            gradient_checkpointing=False,
        )
    ).estimate
    assert est is not None
    act = next(t for t in est.terms if t.name == "activations")
    assert act.formula_key == "activations.unet_levels"
    assert 0.5 * 2**30 < act.bytes < 1.0 * 2**30


def test_checkpointing_keeps_less_than_the_full_set() -> None:
    d = spec("sdxl")
    full, _ = unet_training_activations(d, 128 * 128, False) or (0.0, 0)
    kept, _ = unet_training_activations(d, 128 * 128, True) or (0.0, 0)
    assert 0 < kept < full / 4


def test_a_dit_keeps_the_per_block_figure() -> None:
    assert unet_training_activations(spec("flux.1-dev"), 4096, False) is None
