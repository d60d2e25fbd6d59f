"""Diffusion and video LoRA / full training: the denoiser's weights, adapters, optimizer
and checkpointed activations, and the frozen text encoders and VAE as the trainers keep
them (resident, or a precompute phase on the card)."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import video
from advisor.memory.band import family_band
from advisor.memory.diffusion_components import text_encoder_format, vae_decode
from advisor.memory.quantizers import component_weight_bytes
from advisor.memory.stacks import (
    default_checkpointing,
    precompute_sequential,
    with_default_lora_targets,
)
from advisor.memory.terms import Breakdown, finish, rebalance
from advisor.memory.training_recipe import optimizer_state_bytes_per_param
from advisor.memory.unet_levels import unet_training_activations
from advisor.models.choices import Kind, Mode, Optimizer
from advisor.models.estimate import Estimate
from advisor.models.workload import Workload


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
    sequential = precompute_sequential(w.framework) or w.conditions_precomputed_apart
    phase = max(te, vae + encode) if sequential else te + vae + encode
    if phase <= allocated:
        return allocated
    acc.assume("text_encoders", "precomputed_here")
    acc.terms.clear()
    if sequential and te >= vae + encode:
        # kohya: the text encoders alone on the card, the VAE moved off after the latents
        return acc.add(
            "text_encoders",
            te,
            f"{' + '.join(f'{x:g}B' for x in d.text_encoders_params_b)} ({te_fmt}), "
            "precompute phase (VAE off the card)",
            key="text_encoders.precompute_alone",
            params_b=round(sum(d.text_encoders_params_b), 2),
            format=te_fmt,
        )
    if sequential:
        total = acc.add(
            "vae",
            vae,
            f"VAE {d.vae_params_b:g}B x 2 B (latent caching, text encoders off the card)",
            params_b=d.vae_params_b,
            bytes_per_param=2,
        )
    else:
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


def step_peak(
    w: Workload,
    spec: ModelSpec,
    acc: Breakdown,
    working: float,
    width: int,
    height: int,
    batch: int,
) -> float:
    """The step's transient peak over the weights and optimizer states: the backward
    (gradients with the saved activations, or the optimizer step), or, where the latents are
    not cached, the VAE encoding the step's batch before the forward. finetrainers without
    --precompute_conditions calls prepare_latents (vae.encode of the batch's videos) and
    prepare_conditions every step (finetrainers trainer.py, 0329f619, the training loop); the
    diffusers DreamBooth-LoRA scripts without --cache_latents and kohya sd-scripts without
    --cache_latents encode each batch likewise (vae.encode under no_grad). The previous
    step's gradients are gone then (zero_grad sets them to None), so the encode's working
    set stands beside the weights and the optimizer states alone."""
    d = spec.diffusion
    assert d is not None
    if w.latents_cached or not (w.text_encoders_on_gpu and d.text_encoders_params_b):
        return working
    # a sliced VAE (enable_slicing) encodes the batch one sample at a time
    samples = 1 if w.vae_slicing else batch
    encode = samples * vae_encode_bytes(w, spec, width, height)
    if encode <= working:
        return working
    acc.terms[:] = [t for t in acc.terms if t.name not in ("gradients", "activations")]
    return acc.add(
        "vae_encode",
        encode,
        f"VAE encode of the step's batch ({samples} x {width}x{height}), latents not cached",
        key="vae_encode.per_step",
        size=f"{width}x{height}",
        batch=samples,
    )


# finetrainers' default --target_modules (args.py: to_q to_k to_v to_out.0), the diffusers
# LoRA training scripts' attention projections likewise; read 2026-12-07.
DEFAULT_LORA_TARGETS = "to_q,to_k,to_v,to_out.0"


ALL_LINEAR = "all-linear"


def _linears_once(linears: dict[str, list[int]]) -> dict[str, list[int]]:
    """Each linear once: an entry that lists a model's own module names beside diffusers'
    for the same linears (Wan: q/k/v/o and ffn.0 beside to_q ... ffn.net.0.proj) keeps
    diffusers' names."""
    named = {
        n: row
        for n, row in linears.items()
        if n.startswith(("to_", "add_")) or "net." in n or "proj" in n
    }
    return named or linears


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
    if targets == ALL_LINEAR and d.lora_linears:
        return sum(row[0] * row[1] for row in _linears_once(d.lora_linears).values()) * rank
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


def resident_denoiser(
    w: Workload, spec: ModelSpec, den_w: float, swapped_share: float
) -> tuple[float, bool]:
    """The denoiser's weights on the card during a step, and whether kohya's --split_mode
    set them: under it the larger of the two parts that take turns on the GPU
    (data/models.toml split_parts_b); under block swap the blocks not swapped out."""
    d = spec.diffusion
    assert d is not None
    if w.split_mode and d.split_parts_b and not swapped_share:
        return den_w * max(d.split_parts_b) / sum(d.split_parts_b), True
    return den_w * (1 - swapped_share), False


def add_gradients(
    w: Workload, acc: Breakdown, trainable: float, param_bytes: int, layers: int
) -> int:
    """The trained parameters' gradients, or, with the optimizer step in the backward
    (diffusion-pipe's gradient_release, torchtune's optimizer_in_bwd), one block's: each
    parameter's post-accumulate-grad hook steps its own optimizer and zeroes the gradient
    as soon as it is ready (diffusion-pipe train.py get_optimizer, read 2026-12-07)."""
    if w.optimizer_in_backward:
        block = trainable / max(layers, 1)
        return acc.add(
            "gradients",
            min(trainable, block) * param_bytes,
            f"one block's {block / 1e6:.1f}M x {param_bytes} B (optimizer step in the backward)",
            key="gradients.released",
            params_m=round(block / 1e6, 1),
            bytes_per_param=param_bytes,
        )
    return acc.add(
        "gradients",
        trainable * param_bytes,
        f"{trainable / 1e6:.1f}M trainable x {param_bytes} B",
        params_m=round(trainable / 1e6, 1),
        bytes_per_param=param_bytes,
        shards=1,
    )


def estimate_diffusion_training(
    w: Workload, spec: ModelSpec, acc: Breakdown, fmt: str, den_w: float, width: int, height: int
) -> Estimate:
    """Only the denoiser trains; prompt embeddings and VAE latents are precomputed in the
    diffusers training scripts (their --cache_latents / precompute paths). The steps: the
    checkpointing the stack runs (`_checkpointing`), the denoiser's resident weights and
    adapter (`_add_denoiser_weights`), gradients and optimizer, the activations
    (`_add_activations`), the step's peak and the encoders or their precompute."""
    d = spec.diffusion
    assert d is not None
    batch = w.batch_size or 1
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = _checkpointing(w, acc)
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
        if d.lora_linears:  # the stack's targets where the entry lists the linears
            w = with_default_lora_targets(w, w.framework.lower() if w.framework else None, acc)
        trainable = lora_trainable_params(spec, w.lora_targets, rank, hidden, layers)
        param_bytes = 4
        adapter = trainable * param_bytes  # PEFT keeps the adapter's own weights in fp32
    allocated: float = _add_denoiser_weights(w, spec, acc, fmt, den_w, adapter, trainable, layers)
    if full and fmt == "fp32" and _autocast_16bit(w) and not gc:
        # autocast caches the 16-bit cast of every fp32 leaf weight that requires grad for
        # the whole forward (aten autocast_mode.cpp cached_cast: a frozen LoRA base is cast
        # per op and not kept), and each conv / linear saves its copy for the backward: the
        # term the transformer and CNN recipes count too. Under checkpointing nothing saves
        # them, so they go when the forward's autocast exits, before the backward's peak.
        allocated += acc.add(
            "compute_copy",
            params * 2,
            f"{d.denoiser_params_b:g}B x 2 B autocast 16-bit copy of fp32 weights",
            params_b=round(d.denoiser_params_b, 3),
            cards=1,
        )
    grads = add_gradients(w, acc, trainable, param_bytes, layers)
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
    act_b = _add_activations(w, spec, acc, gc, (hidden, layers), width, height)
    foreach = opt in (Optimizer.adamw, Optimizer.lion) and full and not w.optimizer_in_backward
    step = trainable * param_bytes if foreach else 0
    allocated += step_peak(w, spec, acc, max(grads + act_b, grads + step), width, height, batch)
    listed = sum(t.bytes for t in acc.terms)
    if listed != allocated:
        rebalance(acc, allocated)
    if w.text_encoders_on_gpu:
        allocated += resident_encoders(w, spec, fmt, acc)
    else:
        allocated = precompute_peak(w, spec, fmt, acc, allocated, width, height)
    return finish(acc, allocated, w, True, family_band(Kind.diffusion, True))


def _autocast_16bit(w: Workload) -> bool:
    """Training under autocast to a 16-bit compute dtype (mixed precision fp16 / bf16)."""
    return bool(w.mixed_precision) or (w.compute_dtype or "fp32") in ("fp16", "bf16")


def _checkpointing(w: Workload, acc: Breakdown) -> bool:
    """Gradient checkpointing as asked, else as the named stack runs it, else on; said."""
    gc = w.gradient_checkpointing
    if gc is None:
        # kohya sd-scripts / musubi-tuner and finetrainers checkpoint only when given the flag
        # (data/training_stacks.toml); without a named stack the engine assumes it on, as the
        # guides for cards under 48 GB turn it on. Said in the answer either way.
        framework = w.framework.lower() if w.framework else None
        by_stack = default_checkpointing(framework, w.num_gpus)
        gc = True if by_stack is None else by_stack
        acc.assume("gradient_checkpointing", "on" if gc else "off")
    return gc


def _add_denoiser_weights(
    w: Workload,
    spec: ModelSpec,
    acc: Breakdown,
    fmt: str,
    den_w: float,
    adapter: float,
    trainable: float,
    layers: int,
) -> int:
    """The denoiser's weights on the card (less kohya's swapped blocks, or split mode's
    share) and a LoRA adapter's own fp32 weights."""
    d = spec.diffusion
    assert d is not None
    bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
    units = d.swap_units or layers
    swapped = min(w.blocks_to_swap or 0, units - 1)
    # kohya's block swap (custom_offloading_utils.ModelOffloader) keeps the swapped blocks'
    # weights on the CPU and exchanges them with a resident block's as the forward and the
    # backward reach them: the card holds the other blocks (the embedders and the final
    # layer, a few percent, are counted with the blocks).
    resident, split = resident_denoiser(w, spec, den_w, swapped / units)
    return acc.add(
        "weights",
        resident + adapter,
        f"{d.denoiser} {d.denoiser_params_b:g}B x {bits:g} bits"
        + (f", {swapped} of {units} blocks swapped to the CPU" if swapped else "")
        + (f", split mode: {resident / den_w:.0%} on the GPU at a time" if split else "")
        + (f" + {trainable / 1e6:.1f}M LoRA x 4 B" if adapter else ""),
        key="weights.denoiser_split"
        if split
        else "weights.denoiser_swap"
        if swapped
        else ("weights.denoiser_adapter" if adapter else "weights.denoiser"),
        params_b=d.denoiser_params_b,
        bits=bits,
        adapter_m=round(trainable / 1e6, 1),
        swapped=swapped,
        units=units,
        on_gpu_pct=round(100 * resident / den_w) if den_w else 100,
    )


def _add_activations(
    w: Workload,
    spec: ModelSpec,
    acc: Breakdown,
    gc: bool,
    shape: tuple[int, int],
    width: int,
    height: int,
) -> int:
    """The denoiser's saved activations: a UNet's by resolution level where the entry has
    them, else a block's saved tensors over the latent and text tokens (block inputs only
    under checkpointing). `shape`: (hidden, layers)."""
    d = spec.diffusion
    assert d is not None
    hidden, layers = shape
    batch = w.batch_size or 1
    tokens = training_tokens(w, spec, width, height, acc) + (
        d.text_tokens if d.denoiser == "dit" else 0
    )
    per_token_layer = 40 * hidden  # Korthikanti-style saved tensors per block, 16-bit
    if gc:
        act = batch * tokens * (2 * hidden * layers + per_token_layer)
    else:
        act = batch * tokens * per_token_layer * layers
    by_level = unet_training_activations(d, (width // 8) * (height // 8), gc)
    if by_level is not None:
        # a spatio-temporal UNet runs every (latent) frame as a sample of its batch
        frames = int(tokens // ((width // 8) * (height // 8))) if d.unet_temporal_twins else 1
        per_frame = f" x {frames} frames" if frames > 1 else ""
        shown = {"frames": frames} if frames > 1 else {}
        return acc.add(
            "activations",
            batch * frames * by_level[0],
            f"batch {batch}{per_frame} x UNet levels at {(width // 8) * (height // 8)} latent "
            f"pixels and 1/4, 1/16 ... of them{' (checkpointed)' if gc else ''}",
            key="activations.unet_levels_frames" if frames > 1 else "activations.unet_levels",
            batch=batch,
            tokens=(width // 8) * (height // 8),
            levels=by_level[1],
            **shown,
        )
    return acc.add(
        "activations",
        act,
        f"batch {batch} x {int(tokens)} tokens{' (checkpointed)' if gc else ''}",
        key="activations.denoiser_training",
        batch=batch,
        tokens=int(tokens),
    )
