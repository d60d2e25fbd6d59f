"""Diffusion pipelines: denoiser, text encoders, VAE, offload modes."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.resolve import default_format
from advisor.memory.terms import Breakdown, family_band, finish, rebalance
from advisor.memory.training import optimizer_state_bytes_per_param
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models import (
    Attention,
    Estimate,
    Kind,
    Mode,
    Offload,
    Optimizer,
    Workload,
)


def estimate_diffusion(w: Workload, spec: ModelSpec, acc: Breakdown) -> Estimate:
    d = spec.diffusion
    assert d is not None
    fmt = default_format(w, spec, acc)
    compute_bytes = 4 if fmt == "fp32" else 2
    te_fmt = w.text_encoder_format or fmt
    width = w.image_width or d.default_resolution
    height = w.image_height or d.default_resolution
    if w.image_width is None:
        acc.assume("resolution", f"{width}x{height}")
    images = (w.images_per_prompt or 1) * (w.batch_size or 1)
    if w.images_per_prompt is None and w.batch_size is None:
        acc.assume("images", 1)
    attention = w.attention or Attention.sdpa

    den_w = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, fmt)
    te_w = [estimate_weight_bytes(p * 1e9, None, te_fmt) for p in d.text_encoders_params_b]
    vae_bytes = 4 if (d.vae_force_upcast or fmt == "fp32") else 2
    vae_w = d.vae_params_b * 1e9 * vae_bytes

    if w.mode.is_training:
        return estimate_diffusion_training(w, spec, acc, fmt, den_w, width, height)

    cfg = w.guidance if w.guidance is not None else d.guidance
    batch_eff = images * (2 if cfg else 1)
    latent_tokens = (width // 8) * (height // 8)
    attn_tokens = latent_tokens / d.attn_tokens_divisor
    # The per-token working set is taken as measured at 16-bit; fp32 pipelines are rare
    # and their peak is the VAE decode, which does scale with the dtype below.
    den_act = (
        batch_eff
        * (attn_tokens + (d.text_tokens if d.denoiser == "dit" else 0))
        * d.denoiser_act_bytes_per_token
    )
    # diffusers AttnProcessor: baddbmm input buffer, scores and probs are all score-sized.
    scores = batch_eff * d.attn_heads * attn_tokens**2 * compute_bytes * 3
    if attention == Attention.eager:
        den_act += scores
    elif attention == Attention.sliced:
        den_act += scores / 2  # diffusers "auto" slicing: half the heads at a time
    decode_images = 1 if w.vae_slicing else images
    channels = 64 if w.tiny_vae else 128
    tensors = 3 if w.tiny_vae else d.vae_decode_tensors
    dec_bytes = 2 if w.tiny_vae else vae_bytes
    decode = decode_images * width * height * channels * dec_bytes * tensors
    if w.tiny_vae:
        vae_w = 2.4e6 * 2

    offload = w.cpu_offload
    te_total = sum(te_w) if w.text_encoders_on_gpu else 0
    if offload == Offload.sequential:
        resident = max(den_w / 50, vae_w)  # one submodule at a time
        allocated = acc.add(
            "weights", resident, "sequential CPU offload: one submodule on the GPU at a time"
        )
        peak = max(den_act, decode)
        allocated += acc.add("activations", peak, "max(denoiser pass, VAE decode)")
    elif offload == Offload.model:
        denoise_phase = den_w + den_act
        decode_phase = vae_w + decode
        text_phase = max(te_w) if te_w and w.text_encoders_on_gpu else 0
        if decode_phase >= denoise_phase:
            allocated = acc.add(
                "weights", vae_w, "model CPU offload: only the VAE is resident while decoding"
            )
            allocated += acc.add(
                "vae_decode",
                decode,
                f"{decode_images} x {width}x{height} x {channels} ch x {dec_bytes} B x {tensors} maps",
            )
        else:
            allocated = acc.add(
                "weights", den_w, "model CPU offload: only the denoiser is resident while denoising"
            )
            allocated += acc.add("activations", den_act, f"denoiser at batch {batch_eff}")
        allocated = max(allocated, int(text_phase))
    else:
        allocated = acc.add(
            "weights",
            den_w,
            f"{d.denoiser} {d.denoiser_params_b:g}B x {catalog.find_format(fmt).bits:g} bits",
        )  # type: ignore[union-attr]
        if te_total:
            allocated += acc.add(
                "text_encoders",
                te_total,
                f"{' + '.join(f'{p:g}B' for p in d.text_encoders_params_b)} x {catalog.find_format(te_fmt).bits:g} bits",
            )  # type: ignore[union-attr]
        allocated += acc.add(
            "vae",
            vae_w,
            f"VAE {d.vae_params_b:g}B x {vae_bytes} B"
            + (" (fp32 upcast)" if vae_bytes == 4 else ""),
        )
        if decode >= den_act:
            allocated += acc.add(
                "vae_decode",
                decode,
                f"{decode_images} image(s) x {width}x{height} x {channels} ch x {dec_bytes} B x {tensors} maps alive",
            )
        else:
            allocated += acc.add(
                "activations",
                den_act,
                f"denoiser at batch {batch_eff} ({images} images{' x 2 for CFG' if cfg else ''}), {int(attn_tokens)} attention tokens",
            )
    return finish(acc, allocated, w, False, family_band(Kind.diffusion, False))


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
        f"{d.denoiser} {d.denoiser_params_b:g}B x {catalog.find_format(fmt).bits:g} bits",
    )  # type: ignore[union-attr]
    grads = acc.add(
        "gradients", trainable * param_bytes, f"{trainable / 1e6:.1f}M trainable x {param_bytes} B"
    )
    per = optimizer_state_bytes_per_param(
        opt, param_bytes, bool(w.mixed_precision) and full and param_bytes == 2
    )
    allocated += acc.add(
        "optimizer", trainable * per, f"{trainable / 1e6:.1f}M x {per:g} B ({opt.value})"
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
        "activations", act, f"batch {batch} x {int(tokens)} tokens{' (checkpointed)' if gc else ''}"
    )
    foreach = opt in (Optimizer.adamw, Optimizer.lion) and full
    step = trainable * param_bytes if foreach else 0
    allocated += max(grads + act_b, grads + step)
    listed = sum(t.bytes for t in acc.terms)
    if listed != allocated:
        rebalance(acc, allocated)
    return finish(acc, allocated, w, True, family_band(Kind.diffusion, True))
