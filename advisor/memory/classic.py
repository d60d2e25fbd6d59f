"""Classic CNN / RNN course work: weights, states, activations per sample at input size.

Activations per sample come from the catalog entry (measured or summed per architecture);
an uncatalogued network gets the fit over measured torchvision models in
data/classic_activations.toml (bytes per 224x224 sample against the parameter count),
except an uncatalogued segmentation network, which gets the measured dense-prediction
figure per pixel ([dense_prediction]): its memory is feature maps at 1/4-1/8 of a large
crop, not a function of its parameter count.
The same file holds the detection families' default input (1333x800, padded to a
multiple of 32) and batch (2 per GPU), and the OpenMMLab factor for trainable BN.
"""

from __future__ import annotations

import math
import tomllib
from functools import cache

from advisor import catalog
from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.band import family_band
from advisor.memory.built_variants import built_variant_terms
from advisor.memory.mask_targets import loss_target_terms
from advisor.memory.resolve import default_format
from advisor.memory.terms import Breakdown, finish
from advisor.memory.training_recipe import optimizer_state_bytes_per_param
from advisor.models.choices import Kind, Optimizer, Parallelism
from advisor.models.estimate import Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload


@cache
def _activation_data() -> dict:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        return tomllib.load(fh)


def fallback_activation_bytes_per_sample(params: float) -> tuple[float, int]:
    """(fp32 training bytes per sample, at this square input) for an uncatalogued CNN or
    ViT: the power-law fit of data/classic_activations.toml [fallback]."""
    fit = _activation_data()["fallback"]
    per_sample = fit["coef_bytes"] * (max(params, 1e5) / 1e6) ** fit["exponent"]
    return per_sample, fit["reference_input"]


def family_defaults(spec: ModelSpec | None) -> dict:
    """Default input, padding and batch of a family (detection: mmdet / detectron2)."""
    if spec is None:
        return {}
    return _activation_data().get("family", {}).get(spec.family, {})


# --- dense-prediction fallback (2026-12-01) ----------------------------------------------
def _dense() -> dict:
    return _activation_data()["dense_prediction"]


def is_uncatalogued_dense_prediction(w: Workload, spec: ModelSpec | None) -> bool:
    """A segmentation network without a measured figure: run under a segmentation stack
    (mmsegmentation) or of a dense-prediction family (a Hub model's type)."""
    if spec is not None and spec.activation_bytes_per_sample:
        return False
    dense = _dense()
    if spec is not None and spec.family in dense["families"]:
        return True
    return spec is None and (w.framework or "").lower() in dense["frameworks"]


def dense_prediction_bytes_per_sample(acc: Breakdown) -> tuple[float, int]:
    """(fp32 training bytes per sample, at this square input): the median per-pixel peak
    of the measured MMSeg-style segmentors, said in the answer's assumptions."""
    dense = _dense()
    acc.assume("activation_source", "dense_prediction")
    ref = dense["reference_input"]
    return dense["bytes_per_pixel"] * ref * ref, ref


def run_defaults(w: Workload, spec: ModelSpec | None) -> dict:
    """The family's defaults, or the segmentation stack's for an uncatalogued one."""
    if is_uncatalogued_dense_prediction(w, spec):
        return _dense()
    return family_defaults(spec)


# --- end dense-prediction fallback -------------------------------------------------------


def default_batch_for(w: Workload, spec: ModelSpec | None) -> int:
    """Images per GPU when none is asked: the family's configs' figure for the asked crop
    (data/classic_activations.toml `batch_by_crop`, mmseg's "NxbM" per dataset crop), else
    the family's default, else 32."""
    fam = run_defaults(w, spec)
    by_crop = fam.get("batch_by_crop", {})
    if by_crop and (w.image_width or w.image_height):
        width = w.image_width or w.image_height or 0
        height = w.image_height or width
        crop = f"{max(width, height)}x{min(width, height)}"
        if crop in by_crop:
            return int(by_crop[crop])
    return int(fam.get("default_batch", 32))


def segmentation_class_bytes_per_pixel(w: Workload, spec: ModelSpec | None) -> float:
    """fp32 bytes per input pixel the asked classes add to (or take from) a segmentor's
    measured figure: full-resolution logits, the log-softmax kept per loss head and the
    backward's gradients (data/classic_activations.toml [segmentation_classes])."""
    if spec is None or not spec.activation_classes or not w.num_classes:
        return 0.0
    table = _activation_data()["segmentation_classes"]
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
    table = _activation_data()["fused_focal_loss"]
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
    table = _activation_data()["openmmlab"]
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
    table = _activation_data()["openmmlab"]
    if spec is None or spec.family not in table["families"]:
        return None
    if (w.framework or "").lower() not in table["frameworks"]:
        return None
    backbone = table.get("backbone_of", {}).get(spec.id)
    if backbone is None:
        return None
    return table["backbone_bn_bytes_per_pixel"][backbone] * width * height


def mmdet_mask_target_bytes(
    w: Workload, spec: ModelSpec | None, width: int, height: int, batch: int, amp_share: float
) -> float:
    """Bytes mmdet's bitmap mask-target step holds above the step's backward peak: one
    image's masks copied per positive RoI in float32, less the margin the batch's forward
    leaves under that peak (data/classic_activations.toml [mmdet_mask_targets])."""
    table = _activation_data()["mmdet_mask_targets"]
    if spec is None or spec.id not in table["models"]:
        return 0.0
    if (w.framework or "").lower() not in table["frameworks"]:
        return 0.0
    margin = table["margin_bytes_per_px_per_image"] * batch * amp_share
    return max(0.0, table["transient_bytes_per_px"] - margin) * width * height


def window_scores_per_pixel(spec: ModelSpec | None) -> float:
    """Window-attention scores a Swin backbone computes per input pixel, over all its
    blocks (data/classic_activations.toml [amp_window_attention]); 0 for other networks."""
    table = _activation_data()["amp_window_attention"]
    backbone = table["backbone_of"].get(spec.id) if spec is not None else None
    if backbone is None:
        return 0.0
    arch = table["backbones"][backbone]
    window, patch = arch.get("window", table["window"]), table["patch"]
    return sum(
        depth * heads * window**2 / (patch * 2**stage) ** 2
        for stage, (depth, heads) in enumerate(zip(arch["depths"], arch["heads"], strict=True))
    )


def amp_window_score_bytes(spec: ModelSpec | None, pixels: float, amp_share: float) -> float:
    """Bytes per image Swin's window attention keeps under autocast beyond the AMP share of
    its fp32 figure: fp32 probabilities and their fp16 copy a score (6 B) against the
    share of the fp32 one (4 B)."""
    if amp_share >= 1.0:
        return 0.0
    table = _activation_data()["amp_window_attention"]
    per_score = table["bytes_per_score_amp"] - amp_share * table["bytes_per_score_fp32"]
    return window_scores_per_pixel(spec) * pixels * per_score


def say_what_the_stack_logs(w: Workload, spec: ModelSpec | None, acc: Breakdown) -> None:
    """The assumption lines on what a stack's own memory log holds beside this estimate:
    MMSeg's cuDNN search (data/classic_activations.toml [cudnn_benchmark]) and the YOLO
    trainers' reserved GPU_mem ([reserved_log])."""
    data = _activation_data()
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
    table = _activation_data()["default_amp"]
    framework = (w.framework or "").lower()
    named_stack = not framework or any(f in framework for f in table["frameworks"])
    return spec is not None and spec.family in table["families"] and named_stack


def mask_head_extra_rois(spec: ModelSpec | None, batch: int) -> tuple[int, int]:
    """(RoIs, mask stages): the positive RoIs a trained detector's sampler gives the mask
    head beyond the few the catalog's random-weight measurement had, (sampler cap -
    calibrated positives) per image, and the number of mask heads that run on them
    (data/classic_activations.toml [mask_head_positives]); (0, 0) without a mask head."""
    table = _activation_data()["mask_head_positives"]
    if spec is None or spec.id not in table["mask_stages"]:
        return 0, 0
    extra = max(0, table["positives_cap"] - table["calibrated_positives"])
    return extra * batch, table["mask_stages"][spec.id]


def mask_head_roi_bytes(rois: int, stages: int, amp_share: float) -> float:
    """Bytes the mask heads keep for `rois` more positive RoIs (the measured step's peak a
    RoI, times the AMP share)."""
    per_roi = _activation_data()["mask_head_positives"]["bytes_per_roi"]
    return rois * stages * per_roi * amp_share


def training_extras(
    acc: Breakdown,
    w: Workload,
    spec: ModelSpec | None,
    params: float,
    size: tuple[int, int],
    batch: int,
    amp_share: float,
) -> int:
    """The training terms beside weights, states and activations: the YOLO trainers' EMA
    copy, Swin's window attention under autocast, the loss's targets (label assigner,
    ground-truth masks), the mask head's positive RoIs and mmdet's bitmap mask targets."""
    width, height = size
    added = 0
    window_scores = amp_window_score_bytes(spec, width * height, amp_share) * batch
    if window_scores > 0:
        added += acc.add(
            "amp_window_scores",
            window_scores,
            "Swin window attention kept in fp32 under autocast",
            key="amp_window_scores",
            scores_m=round(window_scores_per_pixel(spec) * width * height * batch / 1e6),
        )
    ema = ema_copy_bytes(spec, params)
    if ema > 0:
        added += acc.add(
            "ema_model",
            ema,
            "EMA copy of the model in fp32 (the YOLO trainers' ModelEMA)",
            key="ema_model",
            params_m=round(params / 1e6, 1),
        )
    added += loss_target_terms(acc, w, spec, size, batch)
    rois, stages = mask_head_extra_rois(spec, batch)
    if rois > 0:
        added += acc.add(
            "mask_head_rois",
            mask_head_roi_bytes(rois, stages, amp_share),
            "mask head on the sampler's positive RoIs (up to 128 an image)",
            key="mask_head_rois",
            rois=rois,
            stages=stages,
        )
    mask_targets = mmdet_mask_target_bytes(w, spec, width, height, batch, amp_share)
    if mask_targets > 0:
        added += acc.add(
            "mask_targets",
            mask_targets,
            "mmdet bitmap mask targets: one image's masks per positive RoI in fp32",
            key="mask_targets",
            size=f"{width}x{height}",
        )
    return added


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


def ema_copy_bytes(spec: ModelSpec | None, params: float) -> float:
    """The fp32 moving-average copy of the model the YOLO trainers keep through training
    (data/classic_activations.toml [ema])."""
    table = _activation_data()["ema"]
    if spec is None or spec.family not in table["families"]:
        return 0.0
    return params * table["bytes_per_param"]


def input_size(w: Workload, spec: ModelSpec | None, ref: int, acc: Breakdown) -> tuple[int, int]:
    """(width, height) the network sees: the asked size, else the family default or the
    reference square, padded up to the family's stride multiple."""
    fam = run_defaults(w, spec)
    if w.image_width is None and w.image_height is None and "default_input" in fam:
        width, height = fam["default_input"]
        acc.assume("resolution", f"{width}x{height}")
        if batch_resize := fam.get("batch_resize"):  # YOLOX: the config's size, the range
            (cw, ch), (lo, hi) = fam["config_input"], batch_resize
            acc.assume("batch_resize", f"{cw}x{ch} → {lo}–{hi} px")
    else:
        width = w.image_width or ref
        height = w.image_height or width
    # A family whose own training recipe is the multi-scale crop (DETR's
    # `multiscale_crop = true`) pads to that canvas in training unless asked otherwise.
    recipe_crop = w.mode.is_training and fam.get("multiscale_crop", False)
    if (w.multiscale_crop or recipe_crop) and "default_input" in fam:
        width, height = multiscale_crop_canvas(width, height)
        acc.assume("multiscale_crop", f"{width}x{height}")
    pad = fam.get("pad_to", 1)
    return math.ceil(width / pad) * pad, math.ceil(height / pad) * pad


def multiscale_crop_canvas(width: int, height: int) -> tuple[int, int]:
    """The canvas a batch pads to under mmdet's multi-scale crop recipe: the long side across,
    and down the largest length the short side reaches when a crop comes out the other way
    round (data/classic_activations.toml [multiscale_crop])."""
    table = _activation_data()["multiscale_crop"]
    long, short = max(width, height), min(width, height)
    flipped = min(long, round(short * table["crop_max"] / table["crop_min"]))
    return (long, flipped) if width >= height else (flipped, long)


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
        acc.assume("training_recipe", "amp_trainer_default")
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
