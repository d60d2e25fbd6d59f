"""Diffusion pipelines: denoiser, text encoders, VAE, offload modes."""

from __future__ import annotations

from dataclasses import dataclass

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import video
from advisor.memory.quantizers import component_weight_bytes, fp32_kept_params, keeps_fp32_modules
from advisor.memory.resolve import default_format
from advisor.memory.terms import Breakdown, family_band, finish, load_peak, rebalance
from advisor.memory.training import optimizer_state_bytes_per_param
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models import (
    Attention,
    Estimate,
    Kind,
    Mode,
    Offload,
    Optimizer,
    Runtime,
    Workload,
)

# 16/32-bit formats: a text encoder given one of these is simply loaded in it.
PLAIN_FORMATS = {"fp32", "fp16", "bf16"}
# Tiled VAE decode (diffusers enable_tiling): tiles of 256 px (CogVideoX, HunyuanVideo,
# SD/SDXL tile_sample_min_size) with overlap; two tiles' maps alive plus the blended output.
TILE_PIXELS = 2 * 256 * 256
# A ControlNet is a trainable copy of the denoiser's encoder and middle blocks (Zhang et al.
# 2023, arXiv:2302.05543): the two checkpoints in the catalog are 0.42 (SD 1.5) and 0.49
# (SDXL) of their UNet. Without a catalog figure: half the denoiser, the larger side.
CONTROLNET_SHARE = 0.5


def text_encoder_format(w: Workload, fmt: str, acc: Breakdown) -> str:
    """A quantizer touches the components it is given. diffusers' documented usage passes
    the quantization config to the transformer (bitsandbytes, GGUF and torchao guides), so
    unless told otherwise the text encoders stay in the 16-bit compute dtype — the safe
    side: if the user quantized them too, they need less."""
    if w.text_encoder_format:
        return w.text_encoder_format
    if fmt in PLAIN_FORMATS:
        return fmt
    te = w.compute_dtype if w.compute_dtype in ("fp16", "bf16") else "bf16"
    acc.assume("text_encoder_format", te)
    return te


@dataclass
class PipelineMemory:
    """A pipeline's components and its two working sets (denoiser pass, VAE decode), each
    with the formula and values its term will show."""

    spec: ModelSpec
    fmt: str
    te_fmt: str
    den_w: float
    te_w: list[float]
    vae_w: float
    vae_bytes: int
    cn_w: float
    den_act: float
    act_formula: str
    act_values: dict
    decode: float
    decode_formula: str
    decode_values: dict
    decode_key: str = "vae_decode"

    def add_decode(self, acc: Breakdown) -> int:
        return acc.add(
            "vae_decode",
            self.decode,
            self.decode_formula,
            key=self.decode_key,
            **self.decode_values,
        )

    def add_activations(self, acc: Breakdown) -> int:
        return acc.add(
            "activations",
            self.den_act,
            self.act_formula,
            key="activations.denoiser",
            **self.act_values,
        )

    def add_working_set(self, acc: Breakdown) -> int:
        """The larger of the denoiser pass and the VAE decode: they never coexist."""
        if self.decode >= self.den_act:
            return self.add_decode(acc)
        return acc.add(
            "activations",
            self.den_act,
            self.act_formula,
            key="activations.denoiser",
            **self.act_values,
        )


def estimate_diffusion(w: Workload, spec: ModelSpec, acc: Breakdown) -> Estimate:
    d = spec.diffusion
    assert d is not None
    fmt = default_format(w, spec, acc)
    te_fmt = text_encoder_format(w, fmt, acc)
    geo = video.geometry(spec.id)
    width = w.image_width or (geo.width if geo else d.default_resolution)
    height = w.image_height or (geo.height if geo else d.default_resolution)
    if w.image_width is None:
        acc.assume("resolution", f"{width}x{height}")
    frames = 1
    if geo is not None:
        frames = w.video_frames or geo.frames
        if w.video_frames is None:
            acc.assume("video_frames", frames)
    images = (w.images_per_prompt or 1) * (w.batch_size or 1)
    if w.images_per_prompt is None and w.batch_size is None:
        acc.assume("images", 1)

    den_w = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, fmt)
    if w.mode.is_training:
        return estimate_diffusion_training(w, spec, acc, fmt, den_w, width, height)
    if w.runtime is None:
        acc.assume("runtime", Runtime.diffusers.value)  # ComfyUI / WebUI allocate alike
    # ComfyUI and the WebUIs (A1111, Forge) manage memory themselves: a component is loaded
    # when its phase runs and idle ones are unloaded when VRAM runs short, so the peak is
    # the largest phase, as with diffusers' enable_model_cpu_offload (ComfyUI
    # comfy/model_management.py load_models_gpu / free_memory); and a VAE decode that runs
    # out of memory is retried tiled (comfy/sd.py VAE.decode). Read 2026-11-30.
    managed = w.runtime in (Runtime.comfyui, Runtime.webui) and w.cpu_offload == Offload.none
    if managed and not w.vae_tiling:
        w = w.model_copy(update={"vae_tiling": True})
    vae_bytes = 4 if (d.vae_force_upcast or fmt == "fp32") else 2
    den_act, act_formula, act_values = denoiser_activations(
        w, spec, fmt, images, frames, width, height
    )
    decode, decode_formula, decode_values = vae_decode(
        w, spec, vae_bytes, images, frames, width, height
    )
    p = PipelineMemory(
        spec=spec,
        fmt=fmt,
        te_fmt=te_fmt,
        den_w=den_w,
        # T5's `wo` stays fp32 under fp16 loads and bitsandbytes (data/quantizers.toml).
        te_w=[component_weight_bytes(x, te_fmt) for x in d.text_encoders_params_b],
        vae_w=2.4e6 * 2 if w.tiny_vae else d.vae_params_b * 1e9 * vae_bytes,
        vae_bytes=vae_bytes,
        cn_w=controlnet_weight_bytes(w, spec, fmt),
        den_act=den_act,
        act_formula=act_formula,
        act_values=act_values,
        decode=decode,
        decode_formula=decode_formula,
        decode_values=decode_values,
        decode_key="vae_decode.video" if geo is not None and not w.tiny_vae else "vae_decode",
    )
    if w.cpu_offload == Offload.sequential:
        allocated = sequential_offload_peak(p, acc)
    elif w.cpu_offload == Offload.model or managed:
        allocated = model_offload_peak(w, p, acc)
    else:
        allocated = all_resident(w, p, acc)
        if w.quantize_after_load and fmt not in PLAIN_FORMATS:
            sixteen = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, "bf16") + p.vae_w
            if w.text_encoders_on_gpu:
                sixteen += sum(
                    estimate_weight_bytes(x * 1e9, None, "bf16") for x in d.text_encoders_params_b
                )
            allocated = load_peak(acc, allocated, sixteen)
    est = finish(acc, allocated, w, False, family_band(Kind.diffusion, False))
    est.runtime = w.runtime or Runtime.diffusers
    return est


def controlnet_weight_bytes(w: Workload, spec: ModelSpec, fmt: str) -> float:
    """ControlNets sit beside the denoiser while it samples (each step runs both), in the
    denoiser's 16-bit compute dtype (quantizers are given the denoiser only). Their down-block
    residuals handed to the denoiser are a few hundred MB at most, inside the band."""
    d = spec.diffusion
    assert d is not None
    if not w.controlnets:
        return 0.0
    params = d.controlnet_params_b or d.denoiser_params_b * CONTROLNET_SHARE
    dtype = fmt if fmt in PLAIN_FORMATS else "bf16"
    return w.controlnets * estimate_weight_bytes(params * 1e9, None, dtype)


def add_controlnets(w: Workload, p: PipelineMemory, acc: Breakdown) -> int:
    d = p.spec.diffusion
    assert d is not None
    params = d.controlnet_params_b or d.denoiser_params_b * CONTROLNET_SHARE
    return acc.add(
        "controlnet",
        p.cn_w,
        f"{w.controlnets} x ControlNet {params:g}B x 16 bits",
        count=w.controlnets,
        params_b=round(params, 3),
    )


def denoiser_formula(p: PipelineMemory) -> str:
    d = p.spec.diffusion
    assert d is not None
    bits = catalog.find_format(p.fmt).bits  # type: ignore[union-attr]
    return f"{d.denoiser} {d.denoiser_params_b:g}B x {bits:g} bits"


def model_offload_peak(w: Workload, p: PipelineMemory, acc: Breakdown) -> int:
    """diffusers enable_model_cpu_offload: one component on the GPU at a time, so the peak
    is the largest phase (text encoding, denoising, decoding)."""
    phases = {
        "denoise": p.den_w + p.cn_w + p.den_act,
        "decode": p.vae_w + p.decode,
        "text": max(p.te_w) if p.te_w and w.text_encoders_on_gpu else 0,
    }
    peak = max(phases, key=lambda k: phases[k])
    if peak == "decode":
        allocated = acc.add(
            "vae",
            p.vae_w,
            "model CPU offload: only the VAE is resident while decoding",
            key="vae.model_offload",
        )
        return allocated + p.add_decode(acc)
    if peak == "denoise":
        allocated = acc.add(
            "weights",
            p.den_w,
            "model CPU offload: only the denoiser is resident while denoising; "
            + denoiser_formula(p),
            key="weights.model_offload",
        )
        allocated += add_controlnets(w, p, acc)
        return allocated + p.add_activations(acc)
    return acc.add(
        "text_encoders",
        phases["text"],
        "model CPU offload: the largest text encoder alone",
        key="text_encoders.model_offload",
    )


# accelerate's cpu_offload and diffusers' leaf-level group offloading move one leaf module
# (a Linear, a conv) to the GPU for its forward: the largest leaf of a DiT is a fraction of
# a percent of it; 1/50 covers a UNet's widest conv and a prefetched next group
# (diffusers hooks/group_offloading.py, use_stream=True keeps one group ahead). Read
# 2026-11-30.
SEQUENTIAL_RESIDENT_SHARE = 1 / 50


def sequential_offload_peak(p: PipelineMemory, acc: Breakdown) -> int:
    """enable_sequential_cpu_offload / leaf-level group offloading: weights stream leaf by
    leaf, so each stage holds little more than its working set. The peak is the larger
    stage: denoising (a streamed leaf + the VAE, which the documented group-offloading
    examples leave on the GPU, + the denoiser pass) or decoding (the VAE + its decode)."""
    leaf = p.den_w * SEQUENTIAL_RESIDENT_SHARE
    if p.vae_w + p.decode >= leaf + p.vae_w + p.den_act:
        allocated = acc.add(
            "vae",
            p.vae_w,
            "sequential / group offload: the VAE on the GPU while decoding (the peak stage)",
            key="vae.sequential_offload",
        )
        return allocated + p.add_decode(acc)
    allocated = acc.add(
        "weights",
        leaf + p.vae_w,
        "sequential CPU offload: one submodule on the GPU at a time, plus the VAE",
        key="weights.sequential_offload",
    )
    return allocated + p.add_activations(acc)


def all_resident(w: Workload, p: PipelineMemory, acc: Breakdown) -> int:
    """Every component on the GPU, plus the larger working set."""
    d = p.spec.diffusion
    assert d is not None
    allocated = acc.add(
        "weights",
        p.den_w,
        denoiser_formula(p),
        key="weights.denoiser",
        params_b=d.denoiser_params_b,
        bits=catalog.find_format(p.fmt).bits,  # type: ignore[union-attr]
    )
    allocated += add_controlnets(w, p, acc)
    te_total = sum(p.te_w) if w.text_encoders_on_gpu else 0
    if te_total:
        te_bits = catalog.find_format(p.te_fmt).bits  # type: ignore[union-attr]
        kept = (
            sum(fp32_kept_params(x) for x in d.text_encoders_params_b)
            if keeps_fp32_modules(p.te_fmt)
            else 0.0
        )
        allocated += acc.add(
            "text_encoders",
            te_total,
            f"{' + '.join(f'{x:g}B' for x in d.text_encoders_params_b)} x {te_bits:g} bits"
            + (f" ({kept:g}B kept in fp32)" if kept else ""),
            params_b=round(sum(d.text_encoders_params_b), 3),
            format=p.te_fmt,
        )
    allocated += acc.add(
        "vae",
        p.vae_w,
        f"VAE {d.vae_params_b:g}B x {p.vae_bytes} B"
        + (" (fp32 upcast)" if p.vae_bytes == 4 else ""),
        params_b=d.vae_params_b,
        bytes_per_param=p.vae_bytes,
    )
    return allocated + p.add_working_set(acc)


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
    compute_bytes = 4 if fmt == "fp32" else 2
    scores = batch_eff * d.attn_heads * attn_tokens**2 * compute_bytes * 3
    attention = w.attention or Attention.sdpa
    if attention == Attention.eager:
        act += scores
    elif attention == Attention.sliced:
        act += scores / 2  # diffusers "auto" slicing: half the heads at a time
    values = {"batch": batch_eff, "tokens": int(attn_tokens + text)}
    return (
        act,
        (
            f"denoiser at batch {batch_eff} ({images} x{cfg_note(cfg, d.cfg_batched)}), "
            f"{int(attn_tokens)} tokens + {text} text x {d.denoiser_act_bytes_per_token / 1024:.0f} KiB"
        ),
        values,
    )


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
        return video_vae_decode(
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


def video_vae_decode(
    w: Workload,
    geo: video.VideoGeometry,
    maps: int,
    vae_bytes: int,
    decode_images: int,
    frames: int,
    width: int,
    height: int,
) -> tuple[float, str, dict]:
    """A 3D VAE's decode: one batch of frames through the last stage with the causal convs'
    caches, or a dense mid-block mask, plus the decoded RGB of every frame
    (advisor/memory/video.py; the figures per VAE in data/models/video.toml)."""
    ws = video.decode_working_set(geo, frames, width, height, vae_bytes, maps, tiling=w.vae_tiling)
    tiled = " (tiled)" if w.vae_tiling else ""
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


def generic_diffusion_spec(params_b: float) -> ModelSpec:
    """A diffusion model known only by its size: a FLUX-like DiT holding every parameter,
    16 latent channels, text embeddings computed elsewhere."""
    from advisor.catalog import DiffusionSpec

    return ModelSpec(
        id="generic-dit",
        name=f"{params_b:g}B diffusion transformer",
        kind=Kind.diffusion,
        family="dit",
        params_b=params_b,
        source="assumed (no catalog entry)",
        diffusion=DiffusionSpec(
            denoiser="dit",
            denoiser_params_b=params_b,
            text_encoders_params_b=[],
            vae_params_b=0.084,
            latent_channels=16,
            default_resolution=1024,
            guidance=False,
            text_tokens=512,
            attn_tokens_divisor=4,
            attn_heads=max(int((params_b / 12) ** 0.5 * 24), 8),
            denoiser_act_bytes_per_token=148000,
            vae_force_upcast=False,
            vae_decode_tensors=9,
        ),
    )


def estimate_diffusion_training(
    w: Workload, spec: ModelSpec, acc: Breakdown, fmt: str, den_w: float, width: int, height: int
) -> Estimate:
    """Only the denoiser trains; prompt embeddings and VAE latents are precomputed in the
    diffusers training scripts (their --cache_latents / precompute paths)."""
    d = spec.diffusion
    assert d is not None
    batch = w.batch_size or 1
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = w.gradient_checkpointing if w.gradient_checkpointing is not None else True
    full = w.mode in (Mode.full, Mode.pretrain)
    params = d.denoiser_params_b * 1e9
    param_bytes = 4 if fmt == "fp32" else 2
    hidden = d.attn_heads * (128 if d.denoiser == "dit" else 64)
    if full:
        trainable = params
    else:
        rank = w.lora_rank or 16
        n_targets = max(len((w.lora_targets or "to_q,to_k,to_v,to_out").split(",")), 1)
        layers = max(int(params / (12 * hidden * hidden)), 1)
        trainable = rank * 2 * hidden * n_targets * layers
        param_bytes = 4
    allocated = acc.add(
        "weights",
        den_w,
        f"{d.denoiser} {d.denoiser_params_b:g}B x {catalog.find_format(fmt).bits:g} bits",  # type: ignore[union-attr]
        key="weights.denoiser",
        params_b=d.denoiser_params_b,
        bits=catalog.find_format(fmt).bits,  # type: ignore[union-attr]
    )
    grads = acc.add(
        "gradients",
        trainable * param_bytes,
        f"{trainable / 1e6:.1f}M trainable x {param_bytes} B",
        params_m=round(trainable / 1e6, 1),
        bytes_per_param=param_bytes,
        shards=1,
    )
    per = optimizer_state_bytes_per_param(
        opt, param_bytes, bool(w.mixed_precision) and full and param_bytes == 2
    )
    allocated += acc.add(
        "optimizer",
        trainable * per,
        f"{trainable / 1e6:.1f}M x {per:g} B ({opt.value})",
        params_m=round(trainable / 1e6, 1),
        bytes_per_param=per,
        optimizer=opt.value,
        shards=1,
    )
    tokens = (width // 8) * (height // 8) / d.attn_tokens_divisor + (
        d.text_tokens if d.denoiser == "dit" else 0
    )
    per_token_layer = 40 * hidden  # Korthikanti-style saved tensors per block, 16-bit
    layers = max(int(params / (12 * hidden * hidden)), 1)
    if gc:
        act = batch * tokens * (2 * hidden * layers + per_token_layer)
    else:
        act = batch * tokens * per_token_layer * layers
    act_b = acc.add(
        "activations",
        act,
        f"batch {batch} x {int(tokens)} tokens{' (checkpointed)' if gc else ''}",
        key="activations.denoiser_training",
        batch=batch,
        tokens=int(tokens),
    )
    foreach = opt in (Optimizer.adamw, Optimizer.lion) and full
    step = trainable * param_bytes if foreach else 0
    allocated += max(grads + act_b, grads + step)
    listed = sum(t.bytes for t in acc.terms)
    if listed != allocated:
        rebalance(acc, allocated)
    return finish(acc, allocated, w, True, family_band(Kind.diffusion, True))
