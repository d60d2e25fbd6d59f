"""A video diffusion model the catalog does not name: the pipeline the catalog's video DiTs
share (text encoder, 3D VAE, patch-2 tokens), sized by the denoiser's parameters and the
video asked. The figures and their sources are in data/models/video.toml [generic_video]."""

from __future__ import annotations

import math
import tomllib
from functools import cache

from advisor import catalog
from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.terms import GENERIC_SOURCE
from advisor.models.choices import Kind
from advisor.specs import DiffusionSpec

GENERIC_VIDEO_ID = "generic-video-dit"
# The video DiTs' working set per token is hidden x 18 values x 2 B (data/models/video.toml,
# measured on HunyuanVideo and CogVideoX); the hidden width grows as sqrt(params) at a fixed
# depth-to-width ratio (params ~ 12 x layers x hidden^2).
BYTES_PER_HIDDEN = 36


@cache
def _generic() -> dict:
    with (DATA_DIR / "models" / "video.toml").open("rb") as fh:
        return dict(tomllib.load(fh)["generic_video"])


@cache
def bytes_per_token_per_sqrt_b() -> float:
    """The largest working set per token / sqrt(denoiser billions) among the catalog's video
    DiTs (those with a [geometry] table): the guess for an unnamed one errs high."""
    from advisor.memory import video

    ratios = [
        m.diffusion.denoiser_act_bytes_per_token / math.sqrt(m.diffusion.denoiser_params_b)
        for m in catalog.models().values()
        if m.diffusion is not None and video.geometry(m.id) is not None
    ]
    return max(ratios)


def generic_video_spec(params_b: float) -> ModelSpec:
    """An unnamed video DiT of `params_b` billion denoiser parameters with the shared
    pipeline: a T5-XXL text encoder, a 4x8 causal 3D VAE and patch-2 tokens
    (video.geometry(GENERIC_VIDEO_ID))."""
    g = _generic()
    per_token = bytes_per_token_per_sqrt_b() * math.sqrt(params_b)
    hidden = per_token / BYTES_PER_HIDDEN
    return ModelSpec(
        id=GENERIC_VIDEO_ID,
        name=f"{params_b:g}B video diffusion transformer",
        kind=Kind.diffusion,
        family="video-dit",
        params_b=params_b + sum(g["text_encoders_params_b"]) + g["vae_params_b"],
        source=f"{GENERIC_SOURCE}: data/models/video.toml [generic_video]",
        diffusion=DiffusionSpec(
            denoiser="dit",
            denoiser_params_b=params_b,
            text_encoders_params_b=list(g["text_encoders_params_b"]),
            vae_params_b=g["vae_params_b"],
            latent_channels=g["latent_channels"],
            default_resolution=480,
            guidance=g["guidance"],
            text_tokens=g["text_tokens"],
            attn_tokens_divisor=4,
            attn_heads=max(int(hidden // g["head_dim"]), 1),
            denoiser_act_bytes_per_token=int(per_token),
            vae_force_upcast=False,
            vae_decode_tensors=g["vae_decode_tensors"],
        ),
    )
