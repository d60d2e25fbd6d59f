"""Stable Video Diffusion's spatio-temporal UNet trained whole (diffusers
UNetSpatioTemporalConditionModel): every frame runs as a sample, each ResNet and transformer
block has a temporal twin blended with it (models/resnet.py SpatioTemporalResBlock,
models/transformers/transformer_temporal.py TransformerSpatioTemporalModel), and autocast
keeps a 16-bit copy of the fp32 weights it trains through the forward (aten
autocast_mode.cpp cached_cast); advisor/memory/unet_levels.py, data/models/video.toml."""

from __future__ import annotations

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.memory.unet_levels import (
    BLEND_BYTES,
    BLOCK_BYTES,
    RESNET_BYTES,
    UP_RESNET_EXTRA_BYTES,
    WRAPPER_BYTES,
    saved_bytes,
    unet_levels,
    unet_training_activations,
)
from advisor.models.choices import Kind, Mode, Optimizer
from advisor.models.workload import Workload


def _spec(model: str):  # type: ignore[no-untyped-def]
    s = find_model(model)
    assert s is not None and s.diffusion is not None
    return s.diffusion


def test_svd_keeps_sd_2_1s_layout_with_a_temporal_twin_per_block() -> None:
    """unet/config.json: block_out_channels [320, 640, 1280, 1280], layers_per_block 2,
    CrossAttnDownBlockSpatioTemporal x 3 + DownBlockSpatioTemporal."""
    d = _spec("svd-img2vid")
    levels = unet_levels(d, 64 * 40)
    assert levels is not None
    assert [lv.channels for lv in levels] == [320, 640, 1280, 1280, 1280]
    assert [lv.blocks for lv in levels] == [5, 5, 5, 0, 1]
    assert all(lv.temporal for lv in levels)
    first = levels[0]
    spatial = (
        2 * RESNET_BYTES
        + 3 * (RESNET_BYTES + UP_RESNET_EXTRA_BYTES)
        + 5 * BLOCK_BYTES
        + 5 * WRAPPER_BYTES
    )
    twins = 5 * RESNET_BYTES + 5 * BLOCK_BYTES + 10 * BLEND_BYTES
    assert saved_bytes(first) == first.tokens * first.channels * (spatial + twins)


def test_the_frames_are_samples_not_one_long_sequence() -> None:
    """SVD_Xtend's README recipe: 16 frames at 512x320, the whole UNet in fp32 under fp16
    autocast, AdamW, no checkpointing: the frames run as 16 samples of 64 x 40 latents
    (was read as one 40,960-token sequence and sized at 604 GiB of activations)."""
    w = Workload(
        kind=Kind.diffusion,
        model="svd-img2vid",
        mode=Mode.full,
        weights_format="fp32",
        compute_dtype="fp16",
        mixed_precision=True,
        batch_size=1,
        image_width=512,
        image_height=320,
        video_frames=16,
        optimizer=Optimizer.adamw,
        gradient_checkpointing=False,
    )
    est = estimate(w).estimate
    assert est is not None
    terms = {t.name: t.bytes for t in est.terms}
    one_frame, _ = unet_training_activations(_spec("svd-img2vid"), 64 * 40, False) or (0.0, 0)
    assert terms["activations"] == int(16 * one_frame)
    # the fp16 copy autocast keeps of the 1.52B trained weights
    assert terms["compute_copy"] == int(1.52e9 * 2)


def test_checkpointing_lets_the_autocast_copies_go_before_the_backward() -> None:
    w = Workload(
        kind=Kind.diffusion,
        model="svd-img2vid",
        mode=Mode.full,
        weights_format="fp32",
        compute_dtype="fp16",
        mixed_precision=True,
        image_width=512,
        image_height=320,
        video_frames=16,
        gradient_checkpointing=True,
    )
    est = estimate(w).estimate
    assert est is not None
    assert "compute_copy" not in {t.name for t in est.terms}


def test_a_frozen_lora_base_keeps_no_autocast_copy() -> None:
    w = Workload(
        kind=Kind.diffusion,
        model="sd-1.5",
        mode=Mode.lora,
        weights_format="fp32",
        compute_dtype="fp16",
        mixed_precision=True,
        gradient_checkpointing=False,
    )
    est = estimate(w).estimate
    assert est is not None
    assert "compute_copy" not in {t.name for t in est.terms}
