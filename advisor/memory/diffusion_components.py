"""A diffusion pipeline's components as the engine sizes them: the text encoders' format,
a ControlNet beside the denoiser, one denoiser pass's working set and the VAE decode."""

from __future__ import annotations

from advisor.catalog import ModelSpec
from advisor.memory import video
from advisor.memory.pipeline_stages import CONTROLNET_SHARE
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.choices import Attention, Runtime
from advisor.models.workload import Workload

# 16/32-bit formats: a text encoder given one of these is simply loaded in it.
PLAIN_FORMATS = {"fp32", "fp16", "bf16"}
# Tiled image-VAE decode (diffusers enable_tiling): tiles of 256 px (SD/SDXL
# tile_sample_min_size) with overlap; two tiles' maps alive plus the blended output. Video
# VAEs carry their own tile size in data/models/video.toml.
TILE_PIXELS = 2 * 256 * 256
DIFFUSERS_LIKE = (Runtime.diffusers, Runtime.comfyui, Runtime.webui)


def text_encoder_format(
    w: Workload, fmt: str, acc: Breakdown, spec: ModelSpec | None = None
) -> str:
    """A quantizer touches the components it is given. diffusers' documented usage passes
    the quantization config to the transformer (bitsandbytes, GGUF and torchao guides), so
    unless told otherwise the text encoders stay in the 16-bit compute dtype — the safe
    side: if the user quantized them too, they need less. A pipeline whose own code loads
    its encoder in another format (`spec`, inference) keeps that one unless told."""
    if w.text_encoder_format:
        return w.text_encoder_format
    own = spec.diffusion.text_encoder_format if spec and spec.diffusion else None
    if own:
        acc.assume("text_encoder_format", own)
        return own
    if fmt in PLAIN_FORMATS:
        return fmt
    te = w.compute_dtype if w.compute_dtype in ("fp16", "bf16") else "bf16"
    acc.assume("text_encoder_format", te)
    return te


def controlnet_weight_bytes(w: Workload, spec: ModelSpec, fmt: str) -> float:
    """ControlNets sit beside the denoiser while it samples (each step runs both), in the
    denoiser's 16-bit compute dtype (quantizers are given the denoiser only). Their down-block
    residuals handed to the denoiser are a few hundred MB at most, inside the band."""
    d = spec.diffusion
    assert d is not None
    if not w.controlnets:
        return 0.0
    params = d.controlnet_params_b or d.denoiser_params_b * CONTROLNET_SHARE
    return w.controlnets * estimate_weight_bytes(params * 1e9, None, controlnet_format(spec, fmt))


def controlnet_format(spec: ModelSpec, fmt: str) -> str:
    """A ControlNet the user adds stays in the 16-bit compute dtype; one the pipeline's own
    code builds is quantized with its denoiser (InfiniteYou pipeline_infu_flux.py at aaa6ea5:
    quantize(self.infusenet, weights=qint8) beside quantize(transformer, ...))."""
    d = spec.diffusion
    assert d is not None
    return fmt if fmt in PLAIN_FORMATS or d.pipeline_controlnets else "bf16"


def denoiser_activations(
    w: Workload, spec: ModelSpec, fmt: str, images: int, frames: int, width: int, height: int
) -> tuple[float, str, dict]:
    """One denoiser pass: tokens x the per-token working set (measured at 16-bit), at the
    batch the sampler runs (x 2 with classifier-free guidance); eager attention adds the
    score matrices (diffusers AttnProcessor: baddbmm input, scores and probs)."""
    d = spec.diffusion
    assert d is not None
    cfg = w.guidance if w.guidance is not None else d.guidance
    # Pipelines that run the unconditional pass as a second call (WanPipeline) hold one
    # batch's activations at a time.
    batch_eff = images * (2 if cfg and d.cfg_batched else 1)
    geo = video.geometry(spec.id)
    if geo is not None:
        attn_tokens = float(video.transformer_tokens(geo, frames, width, height))
    else:
        attn_tokens = (width // 8) * (height // 8) / d.attn_tokens_divisor
    text = d.text_tokens if d.denoiser == "dit" else 0
    act = batch_eff * (attn_tokens + text) * d.denoiser_act_bytes_per_token
    modulation = timestep_modulation_bytes(w, spec) * batch_eff * attn_tokens
    act += modulation
    compute_bytes = 4 if fmt == "fp32" else 2
    hints = d.control_hints * (d.inner_dim or 0) * compute_bytes * batch_eff * attn_tokens
    act += hints
    cache = condition_cache_bytes(w, spec, images * (2 if cfg else 1), attn_tokens + text)
    act += cache
    scores = batch_eff * d.attn_heads * attn_tokens**2 * compute_bytes * 3
    attention = w.attention or Attention.sdpa
    if attention == Attention.eager:
        act += scores
    elif attention == Attention.sliced:
        act += scores / 2  # diffusers "auto" slicing: half the heads at a time
    values: dict = {"batch": batch_eff, "tokens": int(attn_tokens + text)}
    if modulation:
        values["key"] = "activations.denoiser_timestep_per_token"
        values["mod_kib"] = round(timestep_modulation_bytes(w, spec) / 1024)
    if cache:
        values["key"] = "activations.denoiser_condition_cache"
        values["cache_gib"] = round(cache / 2**30, 2)
    if hints:
        values["hints"] = d.control_hints
        values["hints_gib"] = round(hints / 2**30, 2)
    return (
        act,
        (
            f"denoiser at batch {batch_eff} ({images} x{cfg_note(cfg, d.cfg_batched)}), "
            f"{int(attn_tokens)} tokens + {text} text x {d.denoiser_act_bytes_per_token / 1024:.0f} KiB"
        ),
        values,
    )


def condition_cache_bytes(w: Workload, spec: ModelSpec, rows: int, tokens: float) -> float:
    """A pipeline's condition cache kept on the GPU (Workload.condition_cache_on_gpu): the
    whole first-step projections its slices keep alive, every layer, for each guidance
    pass's row (all passes' caches live through the steps, batched or one after the other).
    OmniGen v1: data/models/image_dit.toml."""
    d = spec.diffusion
    assert d is not None
    if not w.condition_cache_on_gpu or not d.condition_cache_bytes_per_token:
        return 0.0
    return float(rows * tokens * d.condition_cache_bytes_per_token)


def timestep_modulation_bytes(w: Workload, spec: ModelSpec) -> float:
    """A latent token's share of the timestep modulation where the denoiser's code embeds
    the timestep per token (Wan2.2's model.py): the fp32 copies x the hidden width. A user
    who names diffusers gets it only where diffusers' pipeline expands the timesteps too."""
    d = spec.diffusion
    assert d is not None
    if not d.timestep_modulation_per_hidden or not d.inner_dim:
        return 0.0
    if w.runtime in DIFFUSERS_LIKE and not d.timestep_per_token_diffusers:
        return 0.0
    return float(d.timestep_modulation_per_hidden * d.inner_dim)


def cfg_note(cfg: bool, batched: bool) -> str:
    if not cfg:
        return " 1"
    return " 2 for CFG" if batched else " 1, CFG passes one after the other"


def vae_decode(
    w: Workload, spec: ModelSpec, vae_bytes: int, images: int, frames: int, width: int, height: int
) -> tuple[float, str, dict]:
    """VAE decode peak: full-resolution 128-channel feature maps alive at once, for every
    image (one with slicing); tiling keeps two tiles' maps. A video VAE: see
    video_vae_decode."""
    d = spec.diffusion
    assert d is not None
    decode_images = 1 if w.vae_slicing else images
    geo = video.geometry(spec.id)
    if geo is not None and not w.tiny_vae:
        return video.video_vae_decode(
            w, geo, d.vae_decode_tensors, vae_bytes, decode_images, frames, width, height
        )
    pixels = video.decoded_pixels(geo, frames, width, height) if geo else width * height
    channels = 64 if w.tiny_vae else 128
    tensors = 3 if w.tiny_vae else d.vae_decode_tensors
    dec_bytes = 2 if w.tiny_vae else vae_bytes
    if w.vae_tiling:
        pixels = min(pixels, TILE_PIXELS * (pixels / (width * height)))
    decode = decode_images * pixels * channels * dec_bytes * tensors
    what = f"{frames} frames x " if frames > 1 else ""
    values = {"images": decode_images, "frames": frames, "size": f"{width}x{height}"}
    values["maps"] = tensors
    return (
        decode,
        (
            f"{decode_images} x {what}{width}x{height}{' (tiled)' if w.vae_tiling else ''} x "
            f"{channels} ch x {dec_bytes} B x {tensors} maps alive"
        ),
        values,
    )
