"""Image pipelines whose text encoders are LLMs or vision-language models: the catalog holds
each tower as the pipeline's own code loads it (model_index.json or the repository's
inference script), so a question naming the model counts them beside the denoiser."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import estimate
from advisor.models.choices import Kind, Mode
from advisor.models.workload import Workload

GIB = 2**30


def _terms(model: str, **kw: object) -> dict[str, float]:
    w = Workload(kind=Kind.diffusion, model=model, mode=Mode.inference, **kw)
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.bytes / GIB for t in est.terms}


@pytest.mark.parametrize(
    ("name", "model", "denoiser_b", "encoders_b"),
    [
        # NVlabs/Sana configs: SanaMS_1600M_P1_D20 / SanaMS_600M_P1_D28 with Gemma-2-2B-it
        ("Efficient-Large-Model/Sana_1600M_1024px_diffusers", "sana-1.6b", 1.6, [2.61]),
        ("Efficient-Large-Model/Sana_600M_1024px_diffusers", "sana-0.6b", 0.59, [2.61]),
        # Step1X-Edit inference.py: FLUX-size DiT and Qwen25VL_7b_Embedder
        ("stepfun-ai/Step1X-Edit", "step1x-edit", 11.9, [8.29]),
        # OmniGen2 README: a 3B VLM (Qwen2.5-VL-3B) and a 4B diffusion model
        ("OmniGen2/OmniGen2", "omnigen2", 4.0, [3.75]),
    ],
)
def test_the_pipelines_towers_are_in_the_catalog(
    name: str, model: str, denoiser_b: float, encoders_b: list[float]
) -> None:
    spec = catalog.find_model(name)
    assert spec is not None and spec.id == model
    assert spec.diffusion is not None
    assert spec.diffusion.denoiser_params_b == denoiser_b
    assert spec.diffusion.text_encoders_params_b == encoders_b


def test_sanas_gemma_encoder_is_counted_beside_its_small_dit() -> None:
    terms = _terms("sana-0.6b", weights_format="bf16")
    # Gemma2Model 2.61B in bf16 outweighs the 0.59B DiT four to one
    assert terms["text_encoders"] == pytest.approx(2.61e9 * 2 / GIB, rel=0.01)
    assert terms["weights"] == pytest.approx(0.59e9 * 2 / GIB, rel=0.02)


def test_sanas_dc_ae_latent_is_32x_compressed() -> None:
    spec = catalog.find_model("sana-1.6b")
    assert spec is not None and spec.diffusion is not None
    d = spec.diffusion
    # dc-ae-f32c32: 1024 px -> 32 x 32 latent tokens at patch 1
    assert (1024 // 8) ** 2 / d.attn_tokens_divisor == 32 * 32
    assert d.latent_channels == 32


def test_step1x_edit_runs_the_reference_tokens_beside_the_image_and_an_fp32_vae() -> None:
    spec = catalog.find_model("step1x-edit")
    assert spec is not None and spec.diffusion is not None
    # prepare(): torch.cat([img, ref_img], dim=-2) -> twice FLUX's 4,096 tokens at 1024 px
    assert (1024 // 8) ** 2 / spec.diffusion.attn_tokens_divisor == 2 * 4096
    assert spec.diffusion.vae_force_upcast  # ae.to(dtype=torch.float32)
    terms = _terms("step1x-edit", weights_format="bf16")
    assert terms["text_encoders"] == pytest.approx(8.29e9 * 2 / GIB, rel=0.01)


def test_infiniteyou_runs_its_infusenet_beside_flux_quantized_with_it() -> None:
    # InfuseNetModel/config.json: a FluxControlNetModel of 4 double + 10 single blocks,
    # counted at 2.96B; pipeline_infu_flux.py quantizes it with the transformer (qint8)
    bf16 = _terms("infiniteyou-flux", weights_format="bf16")
    assert bf16["controlnet"] == pytest.approx(2.96e9 * 2 / GIB, rel=0.01)
    assert bf16["text_encoders"] > 8.5  # FLUX's T5-XXL and CLIP-L
    int8 = _terms("infiniteyou-flux", weights_format="quanto-int8")
    assert int8["controlnet"] == pytest.approx(bf16["controlnet"] / 2, rel=0.05)
    # a ControlNet a user adds to FLUX stays in the 16-bit compute dtype
    flux = _terms("flux.1-dev", weights_format="quanto-int8", controlnets=1)
    assert flux["controlnet"] == pytest.approx(3.3e9 * 2 / GIB, rel=0.01)
    assert "controlnet" not in _terms("flux.1-dev", weights_format="bf16")


@pytest.mark.parametrize(("fmt", "bits"), [("bf16", "16"), ("quanto-int8", "8")])
def test_the_controlnet_line_says_the_format_it_is_sized_in(fmt: str, bits: str) -> None:
    from advisor.render import formula

    w = Workload(kind=Kind.diffusion, model="infiniteyou-flux", mode=Mode.inference)
    est = estimate(w.model_copy(update={"weights_format": fmt})).estimate
    assert est is not None
    term = next(t for t in est.terms if t.name == "controlnet")
    assert f"2.96B × {bits} bit" in formula("en", term)
    assert f"2.96B × {bits} bit" in formula("zh", term)


def test_sana_alone_is_the_image_pipeline_and_sana_video_is_not_read_as_it() -> None:
    from advisor.parse import parse_query

    asked = parse_query("sana 3090 出图").workload
    assert asked is not None and asked.model == "sana-1.6b"
    video = parse_query("sana video 2b 4090")
    assert video.error is not None and video.error.code == "not_estimated"


def test_unos_unmerged_lora_stays_fp32_beside_an_fp8_dit() -> None:
    from advisor.render import formula

    # set_lora: 19 double blocks x 18,874,368 + 38 single x 15,728,640 at rank 512, fp32
    fp8 = _terms("uno-flux", weights_format="fp8")
    assert fp8["adapters"] == pytest.approx(956_301_312 * 4 / GIB, rel=0.01)
    assert _terms("uno-flux", weights_format="bf16")["adapters"] == fp8["adapters"]
    assert "adapters" not in _terms("flux.1-dev", weights_format="fp8")
    w = Workload(kind=Kind.diffusion, model="uno-flux", mode=Mode.inference)
    est = estimate(w).estimate
    assert est is not None
    term = next(t for t in est.terms if t.name == "adapters")
    assert "0.956B × 32 bit" in formula("en", term) and "0.956B × 32 bit" in formula("zh", term)
