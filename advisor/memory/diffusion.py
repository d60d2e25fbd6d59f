"""Diffusion pipelines: denoiser, text encoders, VAE, offload modes."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import video
from advisor.memory.pipeline_stages import (
    CONTROLNET_SHARE,
    PipelineMemory,
    all_resident,
    model_offload_peak,
    offload_load_peak,
    sequential_offload_peak,
)
from advisor.memory.quantizers import component_weight_bytes
from advisor.memory.resolve import default_format
from advisor.memory.stacks import default_checkpointing
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
# Tiled image-VAE decode (diffusers enable_tiling): tiles of 256 px (SD/SDXL
# tile_sample_min_size) with overlap; two tiles' maps alive plus the blended output. Video
# VAEs carry their own tile size in data/models/video.toml.
TILE_PIXELS = 2 * 256 * 256


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
        # a training step's images are its batch; "1 image(s) per prompt" is a generation's,
        # and a video model's is one video (its frames are assumed above)
        unit = "videos" if geo is not None else "images"
        acc.assume("batch_size" if w.mode.is_training else unit, 1)

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
        # T5's `wo` stays fp32 under fp16 loads and bitsandbytes, 16-bit under torchao and
        # quanto's from_pretrained quantizers (data/quantizers.toml).
        te_w=[
            component_weight_bytes(x, te_fmt, w.quantize_after_load)
            for x in d.text_encoders_params_b
        ],
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
    # diffusers' from_pretrained puts bitsandbytes components on the GPU before an offload
    # mode moves them off; ComfyUI and the WebUIs load through their own loaders.
    from_pretrained = w.runtime in (None, Runtime.diffusers)
    if w.cpu_offload == Offload.sequential:
        allocated = sequential_offload_peak(p, acc, w)
        if from_pretrained:
            allocated = offload_load_peak(w, p, acc, allocated)
    elif w.cpu_offload == Offload.model or managed:
        allocated = model_offload_peak(w, p, acc)
        if from_pretrained:
            allocated = offload_load_peak(w, p, acc, allocated)
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


def _encoder_bytes(
    w: Workload, spec: ModelSpec, fmt: str, acc: Breakdown
) -> tuple[float, float, str]:
    """(text encoders, VAE) weight bytes as training loads them, and the encoders' format."""
    d = spec.diffusion
    assert d is not None
    te_fmt = text_encoder_format(w, fmt, acc)
    te = sum(
        component_weight_bytes(x, te_fmt, w.quantize_after_load) for x in d.text_encoders_params_b
    )
    return te, d.vae_params_b * 1e9 * 2, te_fmt


def _add_encoders(
    acc: Breakdown, spec: ModelSpec, te: float, vae: float, te_fmt: str, key: str, note: str
) -> int:
    d = spec.diffusion
    assert d is not None
    total = acc.add(
        "text_encoders",
        te,
        f"{' + '.join(f'{x:g}B' for x in d.text_encoders_params_b)} ({te_fmt}), {note}",
        key=key,
        params_b=round(sum(d.text_encoders_params_b), 2),
        format=te_fmt,
    )
    return total + acc.add(
        "vae",
        vae,
        f"VAE {d.vae_params_b:g}B x 2 B ({note})",
        params_b=d.vae_params_b,
        bytes_per_param=2,
    )


def resident_encoders(w: Workload, spec: ModelSpec, fmt: str, acc: Breakdown) -> int:
    """The frozen text encoders and VAE on the GPU through training when the user did not
    say the embeddings and latents are precomputed: kohya sd-scripts keeps them resident
    unless --cache_latents and --cache_text_encoder_outputs are given (train_network.py),
    finetrainers unless --precompute_conditions (train.py); the diffusers DreamBooth-LoRA
    scripts free the text encoders after encoding the prompts once, so their peak is at
    most this. Stated in the answer."""
    d = spec.diffusion
    assert d is not None
    if not d.text_encoders_params_b:
        return 0
    acc.assume("text_encoders", "resident")
    te, vae, te_fmt = _encoder_bytes(w, spec, fmt, acc)
    return _add_encoders(acc, spec, te, vae, te_fmt, "text_encoders.training", "resident")


def vae_encode_bytes(w: Workload, spec: ModelSpec, width: int, height: int) -> float:
    """Encoding one sample to cached latents (kohya --cache_latents with --vae_batch_size 1,
    finetrainers' and DiffSynth's precompute pass one video at a time) runs the VAE encoder
    at full resolution in 16-bit. Its widest stage mirrors the decoder's (the same channel
    widths at the same sizes, one resnet fewer per level), so the decode working set at that
    size is taken for it: the safe side of the encoder's."""
    geo = video.geometry(spec.id)
    frames = (w.video_frames or geo.frames) if geo is not None else 1
    plain = w.model_copy(update={"vae_slicing": False, "tiny_vae": False})
    return vae_decode(plain, spec, 2, 1, frames, width, height)[0]


def precompute_peak(
    w: Workload,
    spec: ModelSpec,
    fmt: str,
    acc: Breakdown,
    allocated: float,
    width: int,
    height: int,
) -> float:
    """Precomputed embeddings and cached latents are computed on the training card before
    the steps (kohya's --cache_text_encoder_outputs / --cache_latents, finetrainers'
    --precompute_conditions, the diffusers scripts' prompt encoding): the text encoders and
    the VAE are on it then, and that phase is the peak when they outweigh the steps (T5-XXL
    beside a 2B video transformer). The larger of the two, as a load peak is."""
    d = spec.diffusion
    assert d is not None
    if not d.text_encoders_params_b:
        return allocated
    te, vae, te_fmt = _encoder_bytes(w, spec, fmt, acc)
    encode = vae_encode_bytes(w, spec, width, height)
    if te + vae + encode <= allocated:
        return allocated
    acc.assume("text_encoders", "precomputed_here")
    acc.terms.clear()
    total = _add_encoders(
        acc, spec, te, vae, te_fmt, "text_encoders.precompute", "precompute phase"
    )
    return total + acc.add(
        "vae_encode",
        encode,
        f"VAE encode of one sample at {width}x{height} (latents cached on this card)",
        key="vae_encode",
        size=f"{width}x{height}",
    )


# finetrainers' default --target_modules (args.py: to_q to_k to_v to_out.0), the diffusers
# LoRA training scripts' attention projections likewise; read 2026-12-07.
DEFAULT_LORA_TARGETS = "to_q,to_k,to_v,to_out.0"


def lora_trainable_params(
    spec: ModelSpec, targets: str | None, rank: int, hidden: int, layers: int
) -> float:
    """Parameters of rank-r adapters on the target linears: r x (in + out) per linear, the
    linears each target name matches counted from the model's config (DiffusionSpec.
    lora_linears; PEFT matches a target by the module name's suffix, so `to_q` takes the
    self- and the cross-attention's). A name the entry does not list counts one
    hidden x hidden linear per block."""
    d = spec.diffusion
    assert d is not None
    total = 0.0
    for raw in (targets or DEFAULT_LORA_TARGETS).split(","):
        name = raw.strip().removeprefix("attn.")
        if not name:
            continue
        row = d.lora_linears.get(name) or d.lora_linears.get(f"{name}.0")
        if row is not None:
            total += row[0] * row[1] * rank
        else:
            total += layers * 2 * hidden * rank
    return total or layers * 2 * hidden * rank


def training_tokens(w: Workload, spec: ModelSpec, width: int, height: int, acc: Breakdown) -> float:
    """Latent tokens one training sample feeds the denoiser: a video model's latent frames
    x its patch grid (the same count as its inference), an image model's latent grid."""
    d = spec.diffusion
    assert d is not None
    geo = video.geometry(spec.id)
    if geo is None:
        return (width // 8) * (height // 8) / d.attn_tokens_divisor
    frames = w.video_frames or geo.frames
    if w.video_frames is None:
        acc.assume("video_frames", frames)
    return float(video.transformer_tokens(geo, frames, width, height))


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
    gc = w.gradient_checkpointing
    if gc is None:
        # kohya sd-scripts / musubi-tuner and finetrainers checkpoint only when given the flag
        # (data/training_stacks.toml); without a named stack the engine assumes it on, as the
        # guides for cards under 48 GB turn it on. Said in the answer either way.
        framework = w.framework.lower() if w.framework else None
        by_stack = default_checkpointing(framework, w.num_gpus)
        gc = True if by_stack is None else by_stack
        acc.assume("gradient_checkpointing", "on" if gc else "off")
    full = w.mode in (Mode.full, Mode.pretrain)
    params = d.denoiser_params_b * 1e9
    param_bytes = 4 if fmt == "fp32" else 2
    hidden = d.inner_dim or d.attn_heads * (128 if d.denoiser == "dit" else 64)
    layers = d.blocks or max(int(params / (12 * hidden * hidden)), 1)
    adapter = 0.0
    if full:
        trainable = params
    else:
        rank = w.lora_rank or 16
        trainable = lora_trainable_params(spec, w.lora_targets, rank, hidden, layers)
        param_bytes = 4
        adapter = trainable * param_bytes  # PEFT keeps the adapter's own weights in fp32
    bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
    units = d.swap_units or layers
    swapped = min(w.blocks_to_swap or 0, units - 1)
    # kohya's block swap (custom_offloading_utils.ModelOffloader) keeps the swapped blocks'
    # weights on the CPU and exchanges them with a resident block's as the forward and the
    # backward reach them: the card holds the other blocks (the embedders and the final
    # layer, a few percent, are counted with the blocks).
    resident = den_w * (1 - swapped / units)
    allocated: float = acc.add(
        "weights",
        resident + adapter,
        f"{d.denoiser} {d.denoiser_params_b:g}B x {bits:g} bits"
        + (f", {swapped} of {units} blocks swapped to the CPU" if swapped else "")
        + (f" + {trainable / 1e6:.1f}M LoRA x 4 B" if adapter else ""),
        key="weights.denoiser_swap"
        if swapped
        else ("weights.denoiser_adapter" if adapter else "weights.denoiser"),
        params_b=d.denoiser_params_b,
        bits=bits,
        adapter_m=round(trainable / 1e6, 1),
        swapped=swapped,
        units=units,
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
    tokens = training_tokens(w, spec, width, height, acc) + (
        d.text_tokens if d.denoiser == "dit" else 0
    )
    per_token_layer = 40 * hidden  # Korthikanti-style saved tensors per block, 16-bit
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
    if w.text_encoders_on_gpu:
        allocated += resident_encoders(w, spec, fmt, acc)
    else:
        allocated = precompute_peak(w, spec, fmt, acc, allocated, width, height)
    return finish(acc, allocated, w, True, family_band(Kind.diffusion, True))
