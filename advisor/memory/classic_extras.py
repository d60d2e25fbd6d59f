"""The training terms of a classic detector or segmentor beside its weights, states and
activations: the YOLO trainers' EMA copy, Swin's window attention under autocast, the mask
and keypoint heads' positive RoIs and mmdet's bitmap mask targets
(data/classic_activations.toml)."""

from __future__ import annotations

from advisor.catalog import ModelSpec
from advisor.memory.classic_inputs import activation_data
from advisor.memory.mask_targets import loss_target_terms
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


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
            "EMA copy of the model in fp32 (the trainer's ModelEMA / EMAHook)",
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
    keypoint_rois = keypoint_head_extra_rois(spec, batch)
    if keypoint_rois > 0:
        added += acc.add(
            "keypoint_head_rois",
            keypoint_head_roi_bytes(keypoint_rois, amp_share),
            "keypoint head on the sampler's positive RoIs (up to 128 an image)",
            key="keypoint_head_rois",
            rois=keypoint_rois,
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


def ema_copy_bytes(spec: ModelSpec | None, params: float) -> float:
    """The fp32 moving-average copy of the model the family's trainer keeps through
    training: ModelEMA, mmengine's EMAHook (data/classic_activations.toml [ema])."""
    table = activation_data()["ema"]
    if spec is None or spec.family not in table["families"]:
        return 0.0
    return params * table["bytes_per_param"]


def window_scores_per_pixel(spec: ModelSpec | None) -> float:
    """Window-attention scores a Swin backbone computes per input pixel, over all its
    blocks (data/classic_activations.toml [amp_window_attention]); 0 for other networks."""
    table = activation_data()["amp_window_attention"]
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
    table = activation_data()["amp_window_attention"]
    per_score = table["bytes_per_score_amp"] - amp_share * table["bytes_per_score_fp32"]
    return window_scores_per_pixel(spec) * pixels * per_score


def mask_head_extra_rois(spec: ModelSpec | None, batch: int) -> tuple[int, int]:
    """(RoIs, mask stages): the positive RoIs a trained detector's sampler gives the mask
    head beyond the few the catalog's random-weight measurement had, (sampler cap -
    calibrated positives) per image, and the number of mask heads that run on them
    (data/classic_activations.toml [mask_head_positives]); (0, 0) without a mask head."""
    table = activation_data()["mask_head_positives"]
    if spec is None or spec.id not in table["mask_stages"]:
        return 0, 0
    extra = max(0, table["positives_cap"] - table["calibrated_positives"])
    return extra * batch, table["mask_stages"][spec.id]


def mask_head_roi_bytes(rois: int, stages: int, amp_share: float) -> float:
    """Bytes the mask heads keep for `rois` more positive RoIs (the measured step's peak a
    RoI, times the AMP share)."""
    per_roi = activation_data()["mask_head_positives"]["bytes_per_roi"]
    return rois * stages * per_roi * amp_share


def keypoint_head_extra_rois(spec: ModelSpec | None, batch: int) -> int:
    """The positive RoIs a trained Keypoint R-CNN's sampler gives its keypoint head beyond
    the few the catalog's random-weight measurement had, (sampler cap - calibrated
    positives) per image (data/classic_activations.toml [keypoint_head_positives]); 0 for
    a detector without a keypoint head."""
    table = activation_data()["keypoint_head_positives"]
    if spec is None or spec.id not in table["models"]:
        return 0
    return max(0, table["positives_cap"] - table["calibrated_positives"]) * batch


def keypoint_head_roi_bytes(rois: int, amp_share: float) -> float:
    """Bytes the keypoint head keeps for `rois` more positive RoIs: its pooled input, the
    eight conv outputs and the keypoint logits' log-softmax a RoI, times the AMP share."""
    return rois * activation_data()["keypoint_head_positives"]["bytes_per_roi"] * amp_share


def mmdet_mask_target_bytes(
    w: Workload, spec: ModelSpec | None, width: int, height: int, batch: int, amp_share: float
) -> float:
    """Bytes mmdet's bitmap mask-target step holds above the step's backward peak: one
    image's masks copied per positive RoI in float32, less the margin the batch's forward
    leaves under that peak (data/classic_activations.toml [mmdet_mask_targets])."""
    table = activation_data()["mmdet_mask_targets"]
    if spec is None or spec.id not in table["models"]:
        return 0.0
    if (w.framework or "").lower() not in table["frameworks"]:
        return 0.0
    margin = table["margin_bytes_per_px_per_image"] * batch * amp_share
    return max(0.0, table["transient_bytes_per_px"] - margin) * width * height
