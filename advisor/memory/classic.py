"""Classic CNN / RNN course work: weights, states, activations per sample at input size."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.resolve import default_format
from advisor.memory.terms import Breakdown, family_band, finish
from advisor.memory.training import optimizer_state_bytes_per_param
from advisor.models import (
    Estimate,
    Kind,
    Optimizer,
    ResolvedModel,
    Workload,
)


def estimate_classic_cnn(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: Breakdown
) -> Estimate:
    params = model.params_b * 1e9
    fmt = default_format(w, spec, acc) if w.weights_format else "fp32"
    amp = w.mixed_precision or (w.compute_dtype in ("fp16", "bf16"))
    batch = w.batch_size or 32
    if w.batch_size is None:
        acc.assume("batch_size", 32)
    ref = (spec.reference_input if spec else None) or 224
    width = w.image_width or ref
    height = w.image_height or width
    size = f"{width}x{height}"
    per_sample = (
        spec.activation_bytes_per_sample if spec and spec.activation_bytes_per_sample else 50e6
    )
    # Convolutional activations scale with the input area; AMP halves most of them (batch
    # norm statistics and the loss stay fp32).
    per_sample *= width * height / ref**2 * (0.55 if amp else 1.0)
    bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
    allocated = acc.add(
        "weights",
        params * bits / 8,
        f"{params / 1e6:.1f}M params x {fmt}",
        key="weights.small",
        params_m=round(params / 1e6, 1),
        format=fmt,
    )
    if w.mode.is_training:
        opt = w.optimizer or Optimizer.adamw
        if w.optimizer is None:
            acc.assume("optimizer", "adamw")
        allocated += acc.add(
            "gradients",
            params * 4,
            "fp32 gradients",
            params_m=round(params / 1e6, 1),
            bytes_per_param=4,
            shards=1,
        )
        per = optimizer_state_bytes_per_param(opt, 4, False)
        allocated += acc.add(
            "optimizer",
            params * per,
            opt.value,
            params_m=round(params / 1e6, 1),
            bytes_per_param=per,
            optimizer=opt.value,
            shards=1,
        )
        allocated += acc.add(
            "activations",
            batch * per_sample,
            f"batch {batch} x {per_sample / 1e6:.0f} MB/sample at {size}px",
            key="activations.per_sample",
            batch=batch,
            mb_per_sample=round(per_sample / 1e6),
            size=size,
        )
    else:
        allocated += acc.add(
            "activations",
            batch * per_sample / 4,
            f"inference: batch {batch}, no saved activations",
            key="activations.inference_small",
            batch=batch,
        )
    return finish(
        acc, allocated, w, w.mode.is_training, family_band(Kind.classic, w.mode.is_training)
    )
