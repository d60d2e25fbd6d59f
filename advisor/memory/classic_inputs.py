"""What a classic CNN / RNN run sees before its memory is summed: the input size, the batch,
and the activations per sample of a network the catalog has no figure for.

The figures are data/classic_activations.toml's: an uncatalogued network gets the fit over
measured torchvision models (bytes per 224x224 sample against the parameter count), except
an uncatalogued segmentation network, which gets the measured dense-prediction figure per
pixel ([dense_prediction]): its memory is feature maps at 1/4-1/8 of a large crop, not a
function of its parameter count. The same file holds the detection families' default input
(1333x800, padded to a multiple of 32) and batch (2 per GPU).
"""

from __future__ import annotations

import math
import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def activation_data() -> dict:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        return tomllib.load(fh)


def fallback_activation_bytes_per_sample(params: float) -> tuple[float, int]:
    """(fp32 training bytes per sample, at this square input) for an uncatalogued CNN or
    ViT: the power-law fit of data/classic_activations.toml [fallback]."""
    fit = activation_data()["fallback"]
    per_sample = fit["coef_bytes"] * (max(params, 1e5) / 1e6) ** fit["exponent"]
    return per_sample, fit["reference_input"]


def family_defaults(spec: ModelSpec | None) -> dict:
    """Default input, padding and batch of a family (detection: mmdet / detectron2)."""
    if spec is None:
        return {}
    return activation_data().get("family", {}).get(spec.family, {})


# --- dense-prediction fallback (2026-12-01) ----------------------------------------------
def _dense() -> dict:
    return activation_data()["dense_prediction"]


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
    table = activation_data()["multiscale_crop"]
    long, short = max(width, height), min(width, height)
    flipped = min(long, round(short * table["crop_max"] / table["crop_min"]))
    return (long, flipped) if width >= height else (flipped, long)
