"""SegFormer's efficient self-attention keeps its softmax outputs for backward: per block
heads x N x N/R^2 scores, N the stage's tokens, both proportional to the pixel count. The
catalog figure at 512 x 512 holds them (ModelSpec.attention_bytes_per_sample); at another
size they grow with the square of the area, the rest with the area (classic.scale_to_input).
Under autocast softmax runs in fp32 and its output is kept beside the matmul's 16-bit copy."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import estimate
from advisor.memory.classic import scale_to_input
from advisor.models.workload import Workload

# Σ depth x heads x N x N/R^2 x 4 B at 512 x 512: strides 4/8/16/32, R 8/4/2/1, heads 1/2/5/8
PER_BLOCK = (16384 * 256 * 1 * 4, 4096 * 256 * 2 * 4, 1024 * 256 * 5 * 4, 256 * 256 * 8 * 4)


def activations(side: int, **extra: object) -> int:
    w = Workload(
        model="segformer-b5",
        mode="full",
        batch_size=1,
        image_width=side,
        image_height=side,
        weights_format="fp32",
        optimizer="adamw",
        **extra,
    )
    est = estimate(w).estimate
    assert est is not None
    return next(t.bytes for t in est.terms if t.name == "activations")


def test_the_catalog_scores_are_the_architectures_arithmetic():
    for model, depths in (("segformer-b2", (3, 4, 6, 3)), ("segformer-b5", (3, 6, 40, 3))):
        spec = catalog.find_model(model)
        assert spec is not None and spec.reference_input == 512
        assert spec.attention_bytes_per_sample == sum(
            d * b for d, b in zip(depths, PER_BLOCK, strict=True)
        )


def test_scores_grow_with_the_square_of_the_area_the_rest_with_the_area():
    spec = catalog.find_model("segformer-b5")
    assert spec is not None and spec.activation_bytes_per_sample and spec.attention_bytes_per_sample
    total, scores = spec.activation_bytes_per_sample, spec.attention_bytes_per_sample
    assert activations(512) == pytest.approx(total, rel=1e-6)
    assert activations(1024) == pytest.approx((total - scores) * 4 + scores * 16, rel=1e-6)
    # a model without whole-image attention scales with the area alone
    assert scale_to_input(1e8, catalog.find_model("resnet50"), 4.0, 1.0) == 4e8


def test_under_autocast_the_scores_keep_their_fp32_softmax_and_a_16_bit_copy():
    spec = catalog.find_model("segformer-b5")
    assert spec is not None
    amp = scale_to_input(1e9, spec, 1.0, 0.55)
    scores = float(spec.attention_bytes_per_sample or 0)
    assert amp == pytest.approx((1e9 - scores) * 0.55 + scores * 1.5)


def test_detr_encoder_scores_are_a_part_of_their_own_at_1024_px():
    """6 encoder layers x 8 heads x (32 x 32)^2 tokens x 9 B (softmax 4, dropout output 4 and
    mask 1); the calibrated figure's linearly scaled share of them (273 tokens at 672 x 416,
    x3.751 x0.86) replaced by it."""
    spec = catalog.find_model("detr-r50")
    assert spec is not None and spec.reference_input == 1024
    assert spec.attention_bytes_per_sample == 6 * 8 * 1024**2 * 9
    linear_share = round(6 * 8 * 273**2 * 9 * (1024**2 / (672 * 416)) * 0.86, -5)
    assert spec.activation_bytes_per_sample == 1_155_000_000 - linear_share + 6 * 8 * 1024**2 * 9


def _vit(mode: str, side: int | None):
    sizes = {"image_width": side, "image_height": side} if side else {}
    w = Workload(model="vit-base", mode=mode, batch_size=32, weights_format="fp32", **sizes)
    return estimate(w)


def test_a_vit_trained_at_a_named_size_runs_over_that_patch_grid():
    """ViT-B/16 (config image_size 224, patch 16: 14 x 14 + CLS = 197 tokens) trained at
    384 x 384 runs over 24 x 24 + CLS = 577 tokens (timm img_size, transformers
    interpolate_pos_encoding), said as the sequence it assumed; at inference the processor
    resizes every image to 224, so the named size changes nothing there."""

    def seq(result) -> str:
        return {a.field: a.value for a in result.assumed}["seq_len"]

    def acts(result) -> int:
        return next(t.bytes for t in result.estimate.terms if t.name == "activations")

    native, named = _vit("full", None), _vit("full", 384)
    assert (seq(native), seq(named), seq(_vit("full", 224))) == ("197", "577", "197")
    assert acts(named) == pytest.approx(acts(native) * 577 / 197, rel=0.01)
    assert acts(_vit("inference", 384)) == acts(_vit("inference", None))
