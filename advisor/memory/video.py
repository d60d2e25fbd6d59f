"""Video pipelines: how frames and pixels become transformer tokens, and the 3D VAE's
decode working set. Geometry per pipeline in data/models/video.toml [geometry.<id>]."""

from __future__ import annotations

import math
import tomllib
from functools import cache

from pydantic import BaseModel

from advisor.catalog import DATA_DIR


class VideoGeometry(BaseModel):
    frames: int
    width: int
    height: int
    temporal: int  # VAE temporal compression
    spatial: int  # VAE spatial compression
    patch: int  # transformer patch (pixels of latent per token side)
    temporal_patch: int
    out_patch: int  # last decoder stage works at 1/out_patch resolution
    decode_frames: int = 0  # output frames decoded at once (0: all)


@cache
def _geometries() -> dict[str, VideoGeometry]:
    with (DATA_DIR / "models" / "video.toml").open("rb") as fh:
        raw = tomllib.load(fh).get("geometry", {})
    return {k: VideoGeometry(**v) for k, v in raw.items()}


def geometry(model_id: str | None) -> VideoGeometry | None:
    return _geometries().get(model_id or "")


def latent_frames(g: VideoGeometry, frames: int) -> int:
    """Causal video VAEs keep the first frame and compress the rest: 1 + (F - 1) / t."""
    return 1 + math.ceil(max(frames - 1, 0) / g.temporal)


def transformer_tokens(g: VideoGeometry, frames: int, width: int, height: int) -> int:
    """Tokens the transformer attends over: latent frames / temporal patch x the latent
    grid / patch^2."""
    t = math.ceil(latent_frames(g, frames) / g.temporal_patch)
    side = g.spatial * g.patch
    return t * math.ceil(height / side) * math.ceil(width / side)


def decoded_pixels(g: VideoGeometry, frames: int, width: int, height: int) -> float:
    """Pixels x frames the decoder's last stage holds at once (1/out_patch^2 of the output,
    for the frames of one decode batch)."""
    at_once = min(frames, g.decode_frames) if g.decode_frames else frames
    return at_once * width * height / g.out_patch**2
