"""Image speed: the denoiser's work per step (the text encoders run once per prompt), and a
card without fp8 is never the fastest for an fp8 job."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import recommend
from advisor.recommend.offload_speed import offload_seconds
from advisor.recommend.speed import speed_facts


def _rec(text: str):
    p = parse_query(text)
    assert p.ok, p.error
    return recommend(p.workload, gpu_id=p.gpu_id, currency="CNY")


def test_flux_dev_speed_counts_the_denoiser_not_the_t5_encoder() -> None:
    """Before: 16.87B (with the 4.8B T5) per step: 1.2 images/min on a 4090; the 11.9B
    denoiser's FLOPs give 1.7 (12B / 16.87B less work per step)."""
    rec = _rec("flux dev 推理 4090 fp8")
    o = rec.named
    anchor = catalog.gpus()["rtx-3090"]  # the FLOPs at half its peak, moved by 3.17 / 1.70
    step_flops = 2 * 11.9e9 * (1024 * 1024 / 64 / 4)
    compute_s = step_flops * 30 / (anchor.dense_tflops * 1e12 * 0.5 * 3.17 / 1.70)
    # plus what its model offload moves over PCIe (tests/test_offload_speed.py)
    moved = offload_seconds(*speed_facts(rec.result).offload, catalog.gpus()["rtx-4090"])
    assert o.images_per_min == round(60 / (compute_s + moved), 1)


@pytest.mark.parametrize(
    "line",
    ["sdxl 1024 on a 3090 how fast", "sdxl出图 3090 一分钟几张", "sdxl 3090 能跑吗 速度多少"],
)
def test_image_speed_across_cards_follows_diffusers_measured_ratios(line: str) -> None:
    """Was: an A100 at 4.4x a 3090 for SDXL (tensor TFLOPS 312 vs 71). diffusers' PyTorch
    2.0 benchmark (SD 1.5, batch 16): A100 3.04, RTX 4090 3.17, RTX 3090 1.70 it/s."""
    rec = _rec(line)
    named = rec.named
    assert named is not None and named.gpu_id == "rtx-3090" and named.images_per_min
    w = rec.result.workload
    for other, ratio in (("a100-80gb-sxm", 3.04 / 1.70), ("rtx-4090", 3.17 / 1.70)):
        o = recommend(w, gpu_id=other, currency="CNY").named
        assert o is not None and o.images_per_min
        assert o.images_per_min / named.images_per_min == pytest.approx(ratio, rel=0.1)
    for o in rec.options:  # no card shown past the fastest measured (1.86x a 3090)
        if o.images_per_min:
            assert o.images_per_min <= named.images_per_min * 3.17 / 1.70 * 1.05


def test_a_card_without_fp8_is_never_the_fastest_for_an_fp8_job() -> None:
    """Before: "A100 40GB ... [最快]" for FLUX-dev fp8."""
    rec = _rec("flux dev 推理 4090 fp8")
    assert rec.fastest is not None
    assert catalog.gpus()[rec.fastest.gpu_id].fp8_supported
