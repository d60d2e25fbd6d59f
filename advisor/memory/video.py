"""Video pipelines: how frames and pixels become transformer tokens, and the 3D VAE's
decode working set. Geometry per pipeline in data/models/video.toml [geometry.<id>]."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel

from advisor.catalog import DATA_DIR
from advisor.models.workload import Workload

# Decoded video: RGB for every frame, kept while the decoder runs and concatenated (or
# clamped) into a second copy at the end.
RGB_CHANNELS = 3


class VideoGeometry(BaseModel):
    frames: int
    width: int
    height: int
    temporal: int  # VAE temporal compression
    spatial: int  # VAE spatial compression
    patch: int  # transformer patch (pixels of latent per token side)
    temporal_patch: int
    out_patch: int  # last decoder stage works at 1/out_patch resolution
    # ... and at 1/out_temporal_patch of the frames (a 3D wavelet unpatcher after it:
    # Cosmos-Tokenizer's Haar patch of 4 in time; causal, the first frame kept)
    out_temporal_patch: int = 1
    decode_frames: int = 0  # output frames decoded at once (0: all)
    # The decoder's working set (video.toml says where each figure comes from):
    decoder_channels: int = 128  # channels of the last decoder stage
    cache_frames: int = 0  # frames each causal conv caches between chunks
    cache_channels: int = 0  # cached conv input channels, in last-stage-resolution units
    output_copies: int = 2  # decoded RGB copies alive at the end
    tile_height: int = 256  # diffusers enable_tiling: tile_sample_min_height
    tile_width: int = 256
    mid_attention_mask: bool = False  # mid-block attention with a dense causal mask
    # A decoder that only decodes tiled (Allegro's AutoencoderKLAllegro raises without
    # tiling): its tiles are used whether or not the user asked for tiling.
    always_tiled: bool = False
    # A pipeline that compresses an even frame count whole, ceil(F / temporal) latent frames,
    # and only an odd one causally (AllegroPipeline.prepare_latents).
    even_frames_whole: bool = False
    # A sampler that generates one fixed-size section at a time (FramePack): `frames` is the
    # section's token count in frames, and the video's length does not change the peak.
    section: bool = False
    # A pipeline whose decode chunk is a setting that defaults to every frame
    # (StableVideoDiffusionPipeline decode_chunk_size): the answer says it decodes them all.
    chunk_setting: bool = False
    # A pipeline that turns every whole group of `frame_group` frames into
    # `group_latent_frames` latent frames and drops the rest (Step-Video-T2V
    # StepVideoPipeline.prepare_latents: max(num_frames // 17 * 3, 1)); 0: causal, as above.
    frame_group: int = 0
    group_latent_frames: int = 0


@dataclass
class DecodeWorkingSet:
    """The 3D VAE decode's bytes and the values its term shows."""

    bytes: float
    at_once: int  # output frames through the decoder at once
    maps: int
    channels: int
    cache_bytes: float
    mask_bytes: float
    output_bytes: float


@cache
def _geometries() -> dict[str, VideoGeometry]:
    # video.toml and the catalog's other video files (models/video_*.toml)
    raw: dict = {}
    for path in sorted((DATA_DIR / "models").glob("video*.toml")):
        with path.open("rb") as fh:
            raw.update(tomllib.load(fh).get("geometry", {}))
    return {k: VideoGeometry(**v) for k, v in raw.items()}


@cache
def per_frame_decode_frames() -> int:
    """Frames through the decoder at once under a per-frame decode (video.toml)."""
    with (DATA_DIR / "models" / "video.toml").open("rb") as fh:
        return int(tomllib.load(fh)["per_frame_decode"]["frames_at_once"])


def geometry(model_id: str | None) -> VideoGeometry | None:
    return _geometries().get(model_id or "")


def latent_frames(g: VideoGeometry, frames: int) -> int:
    """Causal video VAEs keep the first frame and compress the rest: 1 + (F - 1) / t; a
    pipeline with even_frames_whole compresses an even count whole: F / t; one with a
    frame group makes group_latent_frames of each whole group (the rest dropped)."""
    if g.frame_group:
        return max(frames // g.frame_group * g.group_latent_frames, 1)
    if g.even_frames_whole and frames % 2 == 0:
        return math.ceil(frames / g.temporal)
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
    return stage_frames(g, at_once) * width * height / g.out_patch**2


def stage_frames(g: VideoGeometry, at_once: int) -> int:
    """Frames the last decoder stage holds for `at_once` output frames."""
    if g.out_temporal_patch == 1:
        return at_once
    return 1 + math.ceil(max(at_once - 1, 0) / g.out_temporal_patch)


def causal_mask_bytes(tokens: int, dtype_bytes: int) -> float:
    """diffusers' HunyuanVideo VAE builds its mid-block attention mask densely
    (prepare_causal_attention_mask): a bool comparison and torch.where's fp32 result are
    alive together, then the fp32 mask and its copy in the VAE dtype (.to); tokens^2
    entries each. SDPA takes the mask without materializing the scores."""
    cast = dtype_bytes if dtype_bytes != 4 else 0
    per_entry = max(1 + 4, 4 + cast)
    return float(tokens) ** 2 * per_entry


def decode_working_set(
    g: VideoGeometry,
    frames: int,
    width: int,
    height: int,
    dtype_bytes: int,
    maps: int,
    tiling: bool,
    per_frame: bool = False,
    chunk: int | None = None,
) -> DecodeWorkingSet:
    """One video through the 3D VAE decoder. The peak is the larger of two moments:
    the last (full-resolution) stage on one batch of frames (`maps` maps of its channels,
    plus every causal conv's cached frames from the previous batch), and, where the mid
    block attends under a dense mask, that mask. The decoded RGB of all frames is alive at
    both. With enable_tiling the decoder sees one spatial tile at a time (diffusers
    tiled_decode, tile_sample_min_height x _width); the decoded tiles are kept as RGB.
    A pipeline that decodes frame by frame (`per_frame`) puts one frame through the decoder
    at a time (video.toml [per_frame_decode]); a decode chunk the user set (`chunk`:
    decode_chunk_size, decoding_t) replaces the pipeline's default."""
    at_once = min(frames, g.decode_frames) if g.decode_frames else frames
    if chunk:
        at_once = min(frames, chunk)
    if per_frame:
        at_once = min(at_once, per_frame_decode_frames())
    area = float(width * height)
    if tiling or g.always_tiled:
        area = float(min(width, g.tile_width) * min(height, g.tile_height))
    stage_px = area / g.out_patch**2
    stage = stage_frames(g, at_once) * stage_px * g.decoder_channels * maps * dtype_bytes
    cache_bytes = g.cache_frames * stage_px * g.cache_channels * dtype_bytes
    mask = 0.0
    if g.mid_attention_mask:
        tokens = latent_frames(g, at_once) * int(area) // g.spatial**2
        mask = causal_mask_bytes(tokens, dtype_bytes)
    output = RGB_CHANNELS * frames * width * height * dtype_bytes * g.output_copies
    return DecodeWorkingSet(
        bytes=max(stage + cache_bytes, mask) + output,
        at_once=at_once,
        maps=maps,
        channels=g.decoder_channels,
        cache_bytes=cache_bytes,
        mask_bytes=mask,
        output_bytes=output,
    )


def video_vae_decode(
    w: Workload,
    geo: VideoGeometry,
    maps: int,
    vae_bytes: int,
    decode_images: int,
    frames: int,
    width: int,
    height: int,
) -> tuple[float, str, dict]:
    """A 3D VAE's decode: one batch of frames through the last stage with the causal convs'
    caches, or a dense mid-block mask, plus the decoded RGB of every frame
    (decode_working_set; the figures per VAE in data/models/video.toml), as the term shows
    it."""
    ws = decode_working_set(
        geo,
        frames,
        width,
        height,
        vae_bytes,
        maps,
        tiling=w.vae_tiling,
        per_frame=w.vae_per_frame,
        chunk=w.decode_chunk_frames,
    )
    tiled = " (tiled)" if w.vae_tiling or geo.always_tiled else ""
    tiled += " (frame by frame)" if w.vae_per_frame else ""
    values = {
        "images": decode_images,
        "frames": frames,
        "size": f"{width}x{height}",
        "at_once": ws.at_once,
        "maps": ws.maps,
        "channels": ws.channels,
        "bytes_per_value": vae_bytes,
        "cache_gib": round(ws.cache_bytes / 2**30, 2),
        "mask_gib": round(ws.mask_bytes / 2**30, 2),
        "output_gib": round(ws.output_bytes / 2**30, 2),
    }
    formula = (
        f"{decode_images} x {frames} frames at {width}x{height}{tiled}: {ws.at_once} at a time x "
        f"{ws.maps} maps x {ws.channels} ch x {vae_bytes} B + causal-conv cache "
        f"{ws.cache_bytes / 2**30:.2f} GiB"
        + (f" (mid-block mask {ws.mask_bytes / 2**30:.2f} GiB)" if ws.mask_bytes else "")
        + f" + decoded frames {ws.output_bytes / 2**30:.2f} GiB"
    )
    return decode_images * ws.bytes, formula, values
