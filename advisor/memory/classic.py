"""Classic CNN / RNN course work: weights, states, activations per sample at input size.

Activations per sample come from the catalog entry (measured or summed per architecture),
else from advisor/memory/classic_inputs.py's fallbacks, scaled to the input asked with the
stack's own terms: the OpenMMLab factor for trainable BN, the asked classes' logits and
mmcv's fused focal loss (data/classic_activations.toml). The training terms beside them are
advisor/memory/classic_extras.py's.
"""

from __future__ import annotations

import math

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.band import family_band
from advisor.memory.built_variants import built_variant_terms
from advisor.memory.classic_extras import training_extras
from advisor.memory.classic_inputs import (
    activation_data,
    default_batch_for,
    dense_prediction_bytes_per_sample,
    fallback_activation_bytes_per_sample,
    input_size,
    is_uncatalogued_dense_prediction,
    run_defaults,
)
from advisor.memory.resolve import default_format
from advisor.memory.terms import Breakdown, finish
from advisor.memory.training_recipe import optimizer_state_bytes_per_param
from advisor.memory.video_state import tracking_state
from advisor.models.choices import Kind, Optimizer, Parallelism
from advisor.models.estimate import Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload


def segmentation_class_bytes_per_pixel(w: Workload, spec: ModelSpec | None) -> float:
    """fp32 bytes per input pixel the asked classes add to (or take from) a segmentor's
    measured figure: full-resolution logits, the log-softmax kept per loss head and the
    backward's gradients (data/classic_activations.toml [segmentation_classes])."""
    if spec is None or not spec.activation_classes or not w.num_classes:
        return 0.0
    table = activation_data()["segmentation_classes"]
    one_loss = spec.family in table["one_loss_families"]
    per_class = table[
        "bytes_per_pixel_per_class_one_loss" if one_loss else "bytes_per_pixel_per_class_two_losses"
    ]
    return (w.num_classes - spec.activation_classes) * per_class


def fused_focal_loss_saving_bytes(
    w: Workload, spec: ModelSpec | None, width: int, height: int
) -> float:
    """fp32 bytes per image an OpenMMLab RetinaNet does not keep against the measured
    entry: mmcv's fused sigmoid focal loss keeps its input and target, torchvision's keeps
    every elementwise step (data/classic_activations.toml [fused_focal_loss])."""
    table = activation_data()["fused_focal_loss"]
    if spec is None or spec.family not in table["families"]:
        return 0.0
    if (w.framework or "").lower() not in table["frameworks"]:
        return 0.0
    locations = sum(math.ceil(width / s) * math.ceil(height / s) for s in table["strides"])
    anchors = locations * table["anchors_per_location"]
    classes = w.num_classes or table["default_classes"]
    return anchors * classes * table["bytes_per_anchor_class"]


def stack_activation_factor(w: Workload, spec: ModelSpec | None) -> float:
    """OpenMMLab keeps BN affine weights trainable (norm_eval) where torchvision and
    detectron2 freeze them: every BN then saves its input. Measured ratio, applied to the
    entries measured with FrozenBatchNorm2d."""
    table = activation_data()["openmmlab"]
    if spec is None or spec.family not in table["families"]:
        return 1.0
    return table["bn_factor"] if (w.framework or "").lower() in table["frameworks"] else 1.0


def openmmlab_bn_bytes(
    w: Workload, spec: ModelSpec | None, width: int, height: int
) -> float | None:
    """fp32 bytes per image OpenMMLab's trainable-affine BN keeps beyond a FrozenBN entry:
    its backbone's measured figure per padded pixel (data/classic_activations.toml
    [openmmlab.backbone_bn_bytes_per_pixel]); None where the entry's backbone is not
    listed (the flat bn_factor then stands) or the stack is not OpenMMLab's."""
    table = activation_data()["openmmlab"]
    if spec is None or spec.family not in table["families"]:
        return None
    if (w.framework or "").lower() not in table["frameworks"]:
        return None
    backbone = table.get("backbone_of", {}).get(spec.id)
    if backbone is None:
        return None
    return table["backbone_bn_bytes_per_pixel"][backbone] * width * height


def say_what_the_stack_logs(w: Workload, spec: ModelSpec | None, acc: Breakdown) -> None:
    """The assumption lines on what a stack's own memory log holds beside this estimate:
    MMSeg's cuDNN search (data/classic_activations.toml [cudnn_benchmark]) and the YOLO
    trainers' reserved GPU_mem ([reserved_log])."""
    data = activation_data()
    framework = (w.framework or "").lower()
    if framework in data["cudnn_benchmark"]["frameworks"]:
        # its configs search cuDNN's algorithms, whose workspaces its log counts too
        acc.assume("cudnn_benchmark", "mmseg_off")
    log = data["reserved_log"]
    named_stack = not framework or any(f in framework for f in log["frameworks"])
    if spec is not None and spec.family in log["families"] and named_stack:
        acc.assume("gpu_mem_column", "yolo_reserved")


def trains_in_amp_by_default(w: Workload, spec: ModelSpec | None) -> bool:
    """A run that names no precision, of a family whose trainer uses AMP unless told not to
    (data/classic_activations.toml [default_amp]), under that trainer or none named."""
    if w.mixed_precision is not None or w.compute_dtype or w.weights_format:
        return False
    table = activation_data()["default_amp"]
    framework = (w.framework or "").lower()
    named_stack = not framework or any(f in framework for f in table["frameworks"])
    return spec is not None and spec.family in table["families"] and named_stack


def scale_to_input(
    per_sample: float, spec: ModelSpec | None, area: float, amp_share: float
) -> float:
    """The reference-size figure at an input `area` times the reference one. Attention
    scores over the whole image (ModelSpec.attention_bytes_per_sample) are tokens x keys, so
    they grow with the square of the area; the rest with the area. Under autocast softmax
    runs in fp32 and its output is kept, beside the 16-bit copy the next matmul saves."""
    attention = float(spec.attention_bytes_per_sample or 0) if spec else 0.0
    attention_dtype = 1.5 if amp_share < 1.0 else 1.0
    return (per_sample - attention) * area * amp_share + attention * area**2 * attention_dtype


def estimate_classic_cnn(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: Breakdown
) -> Estimate:
    """A CNN, detector or segmentor: its weights, in training the AMP recipe's state
    (`_add_training_state`), and a batch of one sample's activations (`_per_sample_bytes`)."""
    params = model.params_b * 1e9
    fmt, amp = _precision_recipe(w, spec, acc)
    default_batch = default_batch_for(w, spec)
    batch = w.batch_size or default_batch
    if w.batch_size is None:
        acc.assume("batch_size", default_batch)
    per_sample, (width, height), amp_share = _per_sample_bytes(w, spec, params, amp, acc)
    size = f"{width}x{height}"
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
        say_what_the_stack_logs(w, spec, acc)
        allocated += _add_training_state(w, spec, acc, params, fmt, amp)
        allocated += acc.add(
            "activations",
            batch * per_sample,
            f"batch {batch} x {per_sample / 1e6:.0f} MB/sample at {size}px",
            key="activations.per_sample",
            batch=batch,
            mb_per_sample=round(per_sample / 1e6),
            size=size,
        )
        allocated += built_variant_terms(
            acc, w, spec, (width, height), batch, per_sample, amp_share
        )
        allocated += training_extras(acc, w, spec, params, (width, height), batch, amp_share)
    else:
        allocated += acc.add(
            "activations",
            batch * per_sample / 4,
            f"inference: batch {batch}, no saved activations",
            key="activations.inference_small",
            batch=batch,
        )
        allocated += tracking_state(w, spec, acc)
    return finish(
        acc, allocated, w, w.mode.is_training, family_band(Kind.classic, w.mode.is_training)
    )


def _precision_recipe(w: Workload, spec: ModelSpec | None, acc: Breakdown) -> tuple[str, bool]:
    """The weights' format, and whether autocast runs (asked, or the trainer's default)."""
    fmt = default_format(w, spec, acc) if w.weights_format else "fp32"
    amp = w.mixed_precision or (w.compute_dtype in ("fp16", "bf16"))
    if w.mode.is_training and fmt in ("fp16", "bf16") and w.mixed_precision is not False:
        # (seg, 2026-12-01) "fp16 training" of a CNN / segmentor / detector is AMP in the
        # stacks they train in (mmcv's AmpOptimWrapper, Ultralytics amp=True, detectron2
        # AMP, torch.autocast): fp32 weights and optimizer, 16-bit activations. Without this
        # the weights were halved and the activations kept at fp32.
        fmt, amp = "fp32", True
        acc.assume("training_recipe", "amp_fp32_master")
    elif w.mode.is_training and trains_in_amp_by_default(w, spec):
        amp = True
        said_as = activation_data()["default_amp"]["said_as"]
        family = spec.family if spec is not None else ""
        acc.assume("training_recipe", said_as.get(family, "amp_trainer_default"))
    return fmt, bool(amp)


def _per_sample_bytes(
    w: Workload, spec: ModelSpec | None, params: float, amp: bool, acc: Breakdown
) -> tuple[float, tuple[int, int], float]:
    """One sample's activations, measured at a reference input (or a fallback) and scaled to
    the input asked, with the stack's terms. (bytes, (width, height), the share AMP keeps)."""
    if spec and spec.activation_bytes_per_sample:
        per_sample, ref = float(spec.activation_bytes_per_sample), spec.reference_input or 224
    elif is_uncatalogued_dense_prediction(w, spec):
        per_sample, ref = dense_prediction_bytes_per_sample(acc)
    else:
        per_sample, ref = fallback_activation_bytes_per_sample(params)
    # More classes than the figure was measured with add their logits per reference pixel;
    # fewer take nothing away (data/classic_activations.toml [segmentation_classes]).
    class_px = segmentation_class_bytes_per_pixel(w, spec)
    if class_px > 0:
        per_sample += class_px * ref * ref
    width, height = input_size(w, spec, ref, acc)
    # Convolutional activations scale with the input area; AMP halves most of them (batch
    # norm statistics and the loss stay fp32).
    amp_share = 0.55 if amp else 1.0
    per_sample = scale_to_input(per_sample, spec, width * height / ref**2, amp_share)
    bn_bytes = openmmlab_bn_bytes(w, spec, width, height)
    if bn_bytes is None:
        per_sample *= stack_activation_factor(w, spec)
    else:
        per_sample += bn_bytes * amp_share
    # The loss runs in fp32 under AMP too (mmdet's force_fp32 on the head's loss).
    per_sample = max(
        per_sample * 0.5, per_sample - fused_focal_loss_saving_bytes(w, spec, width, height)
    )
    return per_sample, (width, height), amp_share


def _add_training_state(
    w: Workload, spec: ModelSpec | None, acc: Breakdown, params: float, fmt: str, amp: bool
) -> int:
    """Autocast's 16-bit weight copies, fp32 gradients, DDP's buckets, the optimizer."""
    allocated = 0
    if amp and fmt == "fp32":
        # autocast keeps the 16-bit cast of every fp32 leaf weight a conv / linear reads
        # for the whole forward (its cast cache), and each conv saves it for backward:
        # the same term as the transformer recipes' (training.py compute_copy)
        allocated += acc.add(
            "compute_copy",
            params * 2,
            f"{params / 1e9:g}B x 2 B autocast 16-bit copy of fp32 weights",
            params_b=round(params / 1e9, 3),
            cards=1,
        )
    opt = w.optimizer or Optimizer(run_defaults(w, spec).get("default_optimizer", "adamw"))
    if w.optimizer is None:
        acc.assume("optimizer", opt.value)
    allocated += acc.add(
        "gradients",
        params * 4,
        "fp32 gradients",
        params_m=round(params / 1e6, 1),
        bytes_per_param=4,
        shards=1,
    )
    if w.parallelism == Parallelism.ddp and w.num_gpus > 1:
        # DDP all-reduces gradients through flat buckets that hold a second copy of
        # them (torch DistributedDataParallel, gradient_as_bucket_view=False by
        # default; the same term as the transformer recipes' ddp_buckets).
        allocated += acc.add(
            "ddp_buckets",
            params * 4,
            "DDP gradient buckets (a second copy of the gradients)",
            params_m=round(params / 1e6, 1),
            bytes_per_param=4,
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
    return allocated
