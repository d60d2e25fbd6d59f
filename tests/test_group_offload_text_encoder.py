"""diffusers block-level group offloading of a transformers text encoder: only top-level
ModuleList / Sequential children are split into groups, and T5 / UMT5 / CLIP encoders keep
their blocks one level down, so the whole encoder is onloaded while it encodes."""

from __future__ import annotations

import pytest

from advisor.memory import GIB, estimate
from advisor.models.workload import Workload


def wan_14b(**extra: object) -> Workload:
    fields: dict = dict(
        model="wan2.1-t2v-14b",
        mode="inference",
        cpu_offload="sequential",
        video_frames=81,
        image_width=832,
        image_height=480,
    )
    return Workload(**(fields | extra))


def terms(w: Workload) -> dict[str, float]:
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.bytes / GIB for t in est.terms}


def test_block_offloaded_umt5_is_on_the_gpu_whole_while_it_encodes() -> None:
    t = terms(wan_14b(text_encoder_block_offload=True))
    # umT5-XXL encoder 5.68B in bf16, every weight at once
    assert t["text_encoders"] == pytest.approx(5.68e9 * 2 / GIB, rel=0.01)
    assert "vae_decode" not in t  # the text stage is now the peak, larger than the decode


def test_block_offloaded_text_encoder_raises_the_peak_over_leaf_streaming() -> None:
    leaf = estimate(wan_14b()).estimate
    block = estimate(wan_14b(text_encoder_block_offload=True)).estimate
    assert leaf is not None and block is not None
    assert block.allocated_bytes > leaf.allocated_bytes + 2 * GIB


def test_a_text_encoder_on_the_cpu_is_not_counted_whatever_its_offload() -> None:
    on_cpu = estimate(wan_14b(text_encoder_block_offload=True, text_encoders_on_gpu=False))
    leaf = estimate(wan_14b(text_encoders_on_gpu=False))
    assert on_cpu.estimate is not None and leaf.estimate is not None
    assert on_cpu.estimate.allocated_bytes == leaf.estimate.allocated_bytes
    assert "text_encoders" not in terms(
        wan_14b(text_encoder_block_offload=True, text_encoders_on_gpu=False)
    )


def test_the_text_stage_names_its_own_formula_in_both_languages() -> None:
    est = estimate(wan_14b(text_encoder_block_offload=True)).estimate
    assert est is not None
    keys = {t.name: t.formula_key for t in est.terms}
    assert keys["text_encoders"] == "text_encoders.block_group_offload"
    assert keys["vae"] == "vae.sequential_offload_text"
