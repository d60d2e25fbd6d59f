"""Turn the dense-prediction measurements into catalog entries.

Reads calibration/data/activations_cpu.json (the mmseg_*, cascade_* and mask_rcnn_swin_* records
of calibration/activations_cpu.py) and writes advisor/data/models/dense_prediction.toml:

- segmentors: peak of live tensors per pixel x 512 x 512 (the catalog's per-sample figure
  at reference_input 512; the engine scales it with the crop's area);
- mmdet detectors: peak per image at 667x400 (padded to 672x416 by the model's transform)
  x 0.86 (the area check of detection_segmentation.toml: Faster R-CNN R50 at 1333x800 over
  its half-size run scaled by area) per 1024 x 1024 pixels, as the other detector entries;
  where a full-size record (`<name>_1333`) exists, its own figure per 1024 x 1024 pixels.

Run with the project's interpreter: python calibration/dense_catalog.py [--median]
(--median prints the median per-pixel figure of the segmentors for
data/classic_activations.toml [dense_prediction]).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "activations_cpu.json"
OUT = ROOT / "advisor" / "data" / "models" / "dense_prediction.toml"
DETECTION_AREA_CHECK = 0.86
DETECTION_PADDED_PX = 672 * 416
FULL_PADDED_PX = 1344 * 800  # a *_1333 record: 1333x800 padded to 32 by the transform

# (id, name, family, record, aliases, what the record's setup is)
SEGMENTORS = [
    (
        "fcn-r101",
        "FCN R-101-D8",
        "fcn",
        "mmseg_fcn_r101_d8",
        ["fcn r101", "fcn r101-d8", "fcn r-101-d8", "fcn-r101-d8", "fcn_r101-d8", "fcn_resnet101"],
    ),
    (
        "deeplabv3-r101",
        "DeepLabV3 R-101-D8",
        "deeplabv3",
        "mmseg_deeplabv3_r101_d8",
        [
            "deeplabv3 r101",
            "deeplabv3 r101-d8",
            "deeplabv3 r-101-d8",
            "deeplabv3-r101-d8",
            "deeplabv3_r101-d8",
            "deeplabv3_resnet101",
            "deeplab v3 r101",
        ],
    ),
    (
        "deeplabv3plus-r50",
        "DeepLabV3+ R-50-D8",
        "deeplabv3plus",
        "mmseg_deeplabv3plus_r50_d8",
        [
            "deeplabv3+",
            "deeplabv3plus",
            "deeplab v3+",
            "deeplabv3-plus",
            "deeplabv3+ r50",
            "deeplabv3plus r50",
            "deeplabv3+ r50-d8",
            "deeplabv3+ r-50-d8",
            "deeplabv3plus_r50-d8",
            "deeplabv3plus r50-d8",
        ],
    ),
    (
        "deeplabv3plus-r101",
        "DeepLabV3+ R-101-D8",
        "deeplabv3plus",
        "mmseg_deeplabv3plus_r101_d8",
        [
            "deeplabv3+ r101",
            "deeplabv3plus r101",
            "deeplabv3+ r101-d8",
            "deeplabv3+ r-101-d8",
            "deeplabv3plus r101-d8",
            "deeplabv3plus_r101-d8",
            "deeplab v3+ r101",
        ],
    ),
    (
        "upernet-r50",
        "UPerNet R-50",
        "upernet",
        "mmseg_upernet_r50",
        ["upernet", "upernet r50", "upernet r-50", "upernet_r50", "uper net r50"],
    ),
    (
        "upernet-r101",
        "UPerNet R-101",
        "upernet",
        "mmseg_upernet_r101",
        ["upernet r101", "upernet r-101", "upernet_r101"],
    ),
    (
        "upernet-swin-t",
        "UPerNet Swin-T",
        "upernet-transformer",
        "mmseg_upernet_swin_t",
        [
            "upernet swin-t",
            "upernet swin t",
            "upernet swin-tiny",
            "swin-t upernet",
            "swin upernet",
            "upernet swin",
        ],
    ),
    (
        "upernet-swin-s",
        "UPerNet Swin-S",
        "upernet-transformer",
        "mmseg_upernet_swin_s",
        ["upernet swin-s", "upernet swin s", "upernet swin-small", "swin-s upernet"],
    ),
    (
        "upernet-swin-b",
        "UPerNet Swin-B",
        "upernet-transformer",
        "mmseg_upernet_swin_b",
        ["upernet swin-b", "upernet swin b", "upernet swin-base", "swin-b upernet"],
    ),
    (
        "upernet-convnext-t",
        "UPerNet ConvNeXt-T",
        "upernet-transformer",
        "mmseg_upernet_convnext_t",
        [
            "upernet convnext-t",
            "upernet convnext t",
            "upernet convnext-tiny",
            "convnext-t upernet",
            "upernet convnext",
        ],
    ),
    (
        "fcn-hrnet-w18",
        "FCN HRNetV2-W18",
        "hrnet",
        "mmseg_fcn_hrnet_w18",
        [
            "hrnet-w18",
            "hrnet w18",
            "hrnetv2-w18",
            "hrnetv2 w18",
            "fcn hr18",
            "fcn_hr18",
            "fcn hrnet w18",
            "fcn hrnetv2p-w18",
            "hrnetv2p-w18",
            "hrnet",
        ],
    ),
    (
        "fcn-hrnet-w48",
        "FCN HRNetV2-W48",
        "hrnet",
        "mmseg_fcn_hrnet_w48",
        [
            "hrnet-w48",
            "hrnet w48",
            "hrnetv2-w48",
            "hrnetv2 w48",
            "fcn hr48",
            "fcn_hr48",
            "fcn hrnet w48",
            "fcn hrnetv2p-w48",
            "hrnetv2p-w48",
        ],
    ),
    (
        "ocrnet-hrnet-w18",
        "OCRNet HRNetV2-W18",
        "ocrnet",
        "mmseg_ocrnet_hrnet_w18",
        [
            "ocrnet",
            "ocrnet hr18",
            "ocrnet_hr18",
            "ocrnet hrnet-w18",
            "ocrnet hrnet w18",
            "hrnet w18 ocr",
            "hrnet-w18 ocr",
            "hrnet-w18-ocr",
            "hrnet ocr",
            "ocrnet w18",
            "ocrnet hrnetv2p-w18",
        ],
    ),
    (
        "ocrnet-hrnet-w48",
        "OCRNet HRNetV2-W48",
        "ocrnet",
        "mmseg_ocrnet_hrnet_w48",
        [
            "ocrnet hr48",
            "ocrnet_hr48",
            "ocrnet hrnet-w48",
            "ocrnet hrnet w48",
            "hrnet w48 ocr",
            "hrnet-w48 ocr",
            "hrnet-w48-ocr",
            "ocrnet w48",
            "ocrnet hrnetv2p-w48",
        ],
    ),
]
# Entries in detection_segmentation.toml whose figure these records replace (MMSeg's
# build rather than torchvision's): printed, not written, for that file's editor.
REPLACES = {"fcn-r50": "mmseg_fcn_r50_d8", "deeplabv3-r50": "mmseg_deeplabv3_r50_d8"}

DETECTORS = [
    (
        "cascade-rcnn-r50-fpn",
        "Cascade R-CNN R50-FPN",
        "cascade-rcnn",
        "cascade_rcnn_r50_fpn",
        [
            "cascade rcnn",
            "cascade r-cnn",
            "cascade-rcnn",
            "cascade rcnn r50",
            "cascade r-cnn r50",
            "cascade-rcnn_r50_fpn_1x_coco",
            "cascade_rcnn_r_50_fpn_1x",
        ],
    ),
    (
        "cascade-mask-rcnn-r50-fpn",
        "Cascade Mask R-CNN R50-FPN",
        "cascade-rcnn",
        "cascade_mask_rcnn_r50_fpn",
        [
            "cascade mask rcnn",
            "cascade mask r-cnn",
            "cascade mask rcnn r50",
            "cascade mask r-cnn r50",
            "cascade-mask-rcnn_r50_fpn_1x_coco",
            "cascade_mask_rcnn_r_50_fpn_1x",
        ],
    ),
    (
        "cascade-rcnn-x101-32x4d-fpn",
        "Cascade R-CNN X101-32x4d-FPN",
        "cascade-rcnn",
        "cascade_rcnn_x101_32x4d_fpn",
        [
            "cascade rcnn x101",
            "cascade r-cnn x101",
            "cascade rcnn x101-32x4d",
            "cascade-rcnn_x101-32x4d_fpn_1x_coco",
        ],
    ),
    (
        "cascade-mask-rcnn-x101-32x4d-fpn",
        "Cascade Mask R-CNN X101-32x4d-FPN",
        "cascade-rcnn",
        "cascade_mask_rcnn_x101_32x4d_fpn",
        [
            "cascade mask rcnn x101",
            "cascade mask r-cnn x101",
            "cascade mask rcnn x101-32x4d",
            "cascade-mask-rcnn_x101-32x4d_fpn_1x_coco",
        ],
    ),
    (
        "cascade-mask-rcnn-x101-64x4d-fpn",
        "Cascade Mask R-CNN X101-64x4d-FPN",
        "cascade-rcnn",
        "cascade_mask_rcnn_x101_64x4d_fpn",
        [
            "cascade mask rcnn x101-64x4d",
            "cascade mask r-cnn x101-64x4d",
            "cascade-mask-rcnn_x101-64x4d_fpn_1x_coco",
        ],
    ),
    (
        "mask-rcnn-swin-t",
        "Mask R-CNN Swin-T",
        "mask-rcnn-swin",
        "mask_rcnn_swin_t_fpn",
        [
            "mask rcnn swin-t",
            "mask r-cnn swin-t",
            "swin-t mask rcnn",
            "mask rcnn swin",
            "mask-rcnn_swin-t-p4-w7_fpn_1x_coco",
            "mask rcnn swin-t fpn",
            "mask r-cnn swin-t fpn",
        ],
    ),
    (
        "mask-rcnn-swin-s",
        "Mask R-CNN Swin-S",
        "mask-rcnn-swin",
        "mask_rcnn_swin_s_fpn",
        [
            "mask rcnn swin-s",
            "mask r-cnn swin-s",
            "swin-s mask rcnn",
            "mask-rcnn_swin-s-p4-w7_fpn_amp-ms-crop-3x_coco",
            "mask rcnn swin-s fpn",
            "mask r-cnn swin-s fpn",
        ],
    ),
]

HEADER = """\
# Dense-prediction models as MMSegmentation / MMDetection configs build them, measured:
# calibration/activations_cpu.py runs one fp32 training step (random weights, CPU) of the nets
# in calibration/dense_nets.py and calibration/dense_detectors.py and records the peak of live tensors;
# calibration/dense_catalog.py turns calibration/data/activations_cpu.json into this file. Written by
# that script: edit it, not this file.
# Segmentors: BN in train mode (SyncBN), auxiliary FCN head on stage 3 (loss 0.4) where
# the config has one, logits resized to the crop for the loss; per 512x512 pixels.
# Dilated ResNets (-D8) and HRNet with Cityscapes' 19 classes, UPerNet with ADE20K's 150.
# mmdet detectors: BN eval with trainable affine (norm_eval), stem + layer1 frozen; peak per
# image per 1024x1024 padded pixels, as the detector entries of detection_segmentation.toml.
"""


def entry(
    model_id: str,
    name: str,
    family: str,
    aliases: list[str],
    params: int,
    figure: int,
    ref: int,
    source: str,
    classes: int | None = None,
) -> str:
    quoted = ", ".join(json.dumps(a) for a in aliases)
    # A segmentor's figure holds its logits and loss at the classes it was measured with.
    classes_line = f"activation_classes = {classes}\n" if classes else ""
    return (
        f'\n[[model]]\nid = "{model_id}"\nname = "{name}"\nkind = "classic"\n'
        f'family = "{family}"\naliases = [{quoted}]\nparams_b = {params / 1e9:.4f}\n'
        f"source = {json.dumps(source)}\nchecked = false\n"
        f"activation_bytes_per_sample = {figure:_}\nreference_input = {ref}\n{classes_line}"
    )


def segmentor_figure(rec: dict) -> int:
    return round(rec["peak_live_bytes_per_pixel"] * 512 * 512 / 1e6) * 1_000_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--median", action="store_true")
    args = ap.parse_args()
    records = json.loads(DATA.read_text())["models"]
    if args.median:
        per_px = sorted(
            r["peak_live_bytes_per_pixel"]
            for k, r in records.items()
            if k.startswith("mmseg_") and not r.get("amp") and not k.endswith(("_19cls", "_150cls"))
        )
        print(f"{len(per_px)} segmentors, median {statistics.median(per_px):.0f} B/px: {per_px}")
        return
    out = [HEADER]
    for model_id, name, family, key, aliases in SEGMENTORS:
        if key not in records:
            continue
        rec = records[key]
        source = (
            f"calibration/activations_cpu.py {key}: torch 2.14.1 / timm 1.0.31 CPU fp32, "
            f"{rec['input'][0]}x{rec['input'][1]} crop batch {rec['batch']}, "
            f"{rec['classes']} classes, peak of live tensors "
            f"{rec['peak_live_bytes_per_pixel']:.0f} B/px (saved "
            f"{rec['saved_bytes_per_pixel']:.0f}), per 512x512 px; params from the same "
            f"build, {rec['date']}"
        )
        out.append(
            entry(
                model_id,
                name,
                family,
                aliases,
                rec["params"],
                segmentor_figure(rec),
                512,
                source,
                rec["classes"],
            )
        )
    for model_id, name, family, key, aliases in DETECTORS:
        if key not in records:
            continue
        full = records.get(f"{key}_1333")
        if full is not None:
            # measured at the size it is asked at: no area check to borrow from R50
            rec = full
            per_image = rec["peak_live_bytes"] / rec["batch"]
            figure = per_image * 1024 * 1024 / FULL_PADDED_PX
            where = f"{key}_1333: ... at 1333x800 (1344x800 padded)"
            check = ""
        else:
            rec = records[key]
            per_image = rec["peak_live_bytes"] / rec["batch"]
            figure = per_image * DETECTION_AREA_CHECK * 1024 * 1024 / DETECTION_PADDED_PX
            where, check = f"{key}: ... at 667x400", ", x0.86 area check"
        source = (
            f"calibration/activations_cpu.py {where.split(':')[0]}: torch 2.14.1 / torchvision "
            f"0.29.1 CPU fp32, peak of live tensors per image{where.split('...')[1]} batch "
            f"{rec['batch']} ({per_image / 1e6:.0f} MB/sample){check}, per 1024x1024 px; "
            f"params from the same build, {rec['date']}"
        )
        out.append(
            entry(
                model_id,
                name,
                family,
                aliases,
                rec["params"],
                round(figure / 1e6) * 1_000_000,
                1024,
                source,
            )
        )
    OUT.write_text("".join(out))
    for model_id, key in REPLACES.items():
        if key in records:
            print(f"{model_id}: {segmentor_figure(records[key]):_} per 512x512 ({key})")


if __name__ == "__main__":
    main()
