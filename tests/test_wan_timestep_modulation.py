"""Wan2.2's own model.py embeds the timestep per token: e [B, L, dim] and e0 [B, L, 6, dim]
in fp32, plus each block's (modulation + e) sum [B, L, 6, dim]: (6 + 6 + 1) x 4 B = 52 B
a hidden unit for every latent token (data/models/video.toml). Wan2.1's model.py embeds one
timestep per sample, and diffusers' A14B WanPipeline passes one timestep per sample."""

from __future__ import annotations

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.models.choices import Offload, Runtime
from advisor.models.workload import Workload

WAN_720P = dict(image_width=1280, image_height=720, video_frames=81, cpu_offload=Offload.model)
TOKENS = 21 * (720 // 16) * (1280 // 16)  # 81 frames -> 21 latent frames, 8x VAE, 2x2 patch


def activations(model: str, **kw: object):  # noqa: ANN201
    est = estimate(Workload(model=model, **WAN_720P, **kw)).estimate  # type: ignore[arg-type]
    assert est is not None
    return {t.name: t for t in est.terms}["activations"]


def test_wan22_holds_52_bytes_a_hidden_unit_per_token_for_its_timestep_modulation() -> None:
    spec = find_model("wan2.2-t2v-a14b")
    assert spec is not None and spec.diffusion is not None
    assert spec.diffusion.timestep_modulation_per_hidden == (6 + 6 + 1) * 4
    act = activations("wan2.2-t2v-a14b")
    assert act.formula_key == "activations.denoiser_timestep_per_token"
    assert act.values["mod_kib"] == 52 * 5120 // 1024  # 260 KiB a token at dim 5120
    diffusers = activations("wan2.2-t2v-a14b", runtime=Runtime.diffusers)
    assert diffusers.formula_key == "activations.denoiser"
    assert abs((act.bytes - diffusers.bytes) - TOKENS * 52 * 5120) < 1e6


def test_wan21_embeds_one_timestep_per_sample() -> None:
    spec = find_model("wan2.1-t2v-14b")
    assert spec is not None and spec.diffusion is not None
    assert spec.diffusion.timestep_modulation_per_hidden == 0
    assert activations("wan2.1-t2v-14b").formula_key == "activations.denoiser"


def test_ti2v_5b_expands_its_timesteps_under_diffusers_too() -> None:
    spec = find_model("wan2.2-ti2v-5b")
    assert spec is not None and spec.diffusion is not None
    assert spec.diffusion.timestep_per_token_diffusers
