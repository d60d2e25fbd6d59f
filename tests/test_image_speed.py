"""Image speed: the denoiser's work per step (the text encoders run once per prompt), and a
card without fp8 is never the fastest for an fp8 job."""

from __future__ import annotations

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import recommend


def _rec(text: str):
    p = parse_query(text)
    assert p.ok, p.error
    return recommend(p.workload, gpu_id=p.gpu_id, currency="CNY")


def test_flux_dev_speed_counts_the_denoiser_not_the_t5_encoder() -> None:
    """Before: 16.87B (with the 4.8B T5) per step: 1.2 images/min on a 4090; the 11.9B
    denoiser's FLOPs give 1.7 (12B / 16.87B less work per step)."""
    o = _rec("flux dev 推理 4090 fp8").named
    gpu = catalog.gpus()["rtx-4090"]
    step_flops = 2 * 11.9e9 * (1024 * 1024 / 64 / 4)
    expected = 60 / (step_flops * 30 / (gpu.dense_tflops * 1e12 * 0.5))
    assert o.images_per_min == round(expected, 1)


def test_a_card_without_fp8_is_never_the_fastest_for_an_fp8_job() -> None:
    """Before: "A100 40GB ... [最快]" for FLUX-dev fp8."""
    rec = _rec("flux dev 推理 4090 fp8")
    assert rec.fastest is not None
    assert catalog.gpus()[rec.fastest.gpu_id].fp8_supported
