"""How many positive RoIs the mask head trained on in the detector calibration runs, and
what each one keeps for the backward.

Run it with the calibration interpreter (calibration/requirements.txt):

    /work/torchenv/bin/python calibration/mask_head_positives.py

The detectors of calibration/activations_cpu.py are built with random weights and seven
boxes an image, so their RPN proposals are scattered and few overlap a box: the mask head
(which runs on the positive RoIs only) trained on a handful of RoIs. A trained detector's
proposals cluster on the objects, and the R-CNN sampler then takes its cap of positives
(mmdet configs/_base_/models/mask-rcnn_r50_fpn.py and cascade-mask-rcnn_r50_fpn.py:
RandomSampler num=512, pos_fraction=0.25, add_gt_as_proposals=True: up to 128 an image
and stage). Two numbers per setup:

- positives: RoIs the mask head ran on, per image (and per stage for Cascade), in the
  same builds, sizes and targets as the activations_cpu.py records the catalog reads;
- bytes per RoI: the peak of live storages of the mask branch (FCNMaskHead as mmdet and
  torchvision build it: RoIAlign 14x14, four 3x3 256-channel convs with ReLU, a 2x
  transposed conv to 28x28, the 1x1 class logits, the loss on the target class's map)
  over 128 RoIs against 8, per RoI, fp32.

Results go to calibration/data/mask_head_positives_cpu.json.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import torch
from torch import nn
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import activations_cpu as cal  # noqa: E402

OUT = HERE / "data" / "mask_head_positives_cpu.json"


def count_mask_rois(model: nn.Module, run) -> list[int]:
    """RoIs entering each mask head in one training forward."""
    seen: list[int] = []

    def hook(_module: nn.Module, args: tuple) -> None:
        seen.append(int(args[0].shape[0]))

    heads = [m for m in model.modules() if isinstance(m, MaskRCNNHeads)]
    handles = [h.register_forward_pre_hook(hook) for h in heads]
    with torch.no_grad():
        run()
    for handle in handles:
        handle.remove()
    return seen


def torchvision_mask_rcnn(scale: float) -> list[int]:
    h, w = (round(side * scale) for side in cal.DETECTION_SIZE)
    backbone = cal.fpn_backbone("resnet50", True, one_stage=False)
    model = cal.DETECTORS["maskrcnn"](backbone, min_size=h, max_size=w).train()
    images = [torch.randn(3, h, w)]
    targets = cal.targets_for("maskrcnn", 1, h, w)
    return count_mask_rois(model, lambda: model(images, targets))


def cascade_mask_rcnn(scale: float) -> list[int]:
    from dense_detectors import CascadeRCNN
    from torchvision.models import detection
    from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor

    h, w = (round(side * scale) for side in cal.DETECTION_SIZE)
    backbone = _resnet_fpn_extractor(cal.mmdet_body("resnet50"), 3)
    base = detection.FasterRCNN(backbone, num_classes=81, min_size=h, max_size=w)
    model = cal.bn_eval(CascadeRCNN(base, True).train())
    images = [torch.randn(3, h, w)]
    targets = cal.mmdet_targets(1, h, w, True)
    return count_mask_rois(model, lambda: model(images, targets))


def swin_mask_rcnn(scale: float) -> list[int]:
    from dense_detectors import swin_mask_rcnn as build

    h, w = (round(side * scale) for side in cal.DETECTION_SIZE)
    model = build("swin_tiny_patch4_window7_224", h, w).train()
    images = [torch.randn(3, h, w)]
    targets = cal.mmdet_targets(1, h, w, True)
    return count_mask_rois(model, lambda: model(images, targets))


def mask_branch_peak(rois: int) -> int:
    """Peak of live storages of the mask branch's training step over `rois` RoIs."""
    head = MaskRCNNHeads(256, [256, 256, 256, 256], 1)
    predictor = MaskRCNNPredictor(256, 256, 81)
    feats = torch.randn(rois, 256, 14, 14, requires_grad=True)
    labels = torch.randint(1, 81, (rois,))
    targets = torch.rand(rois, 28, 28).round()
    model = nn.ModuleList([head, predictor])

    def step() -> torch.Tensor:
        logits = predictor(head(feats))
        picked = logits[torch.arange(rois), labels]
        return nn.functional.binary_cross_entropy_with_logits(picked, targets)

    return cal.count_step(model, step)["peak_live_bytes"]


def step_peak_at_positives(cap_positives: bool) -> dict:
    """The whole torchvision Mask R-CNN R50-FPN step at 1333x800 (the catalog's
    maskrcnn_resnet50_fpn_1333 record), as built, and with the R-CNN assigner's
    foreground threshold lowered so that the sampler fills its 128 positives, as a trained
    RPN's proposals do: the step's peak of live storages either way."""
    h, w = cal.DETECTION_SIZE
    backbone = cal.fpn_backbone("resnet50", True, one_stage=False)
    model = cal.DETECTORS["maskrcnn"](backbone, min_size=h, max_size=w).train()
    if cap_positives:
        matcher = model.roi_heads.proposal_matcher
        matcher.high_threshold = matcher.low_threshold = 1e-3
    images = [torch.randn(3, h, w)]
    targets = cal.targets_for("maskrcnn", 1, h, w)
    rois = count_mask_rois(model, lambda: model(images, targets))
    out = cal.count_step(model, lambda: sum(model(images, targets).values()))
    return {"positives": rois, "peak_live_bytes": out["peak_live_bytes"]}


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(2)
    few, many = 8, 128
    per_roi = (mask_branch_peak(many) - mask_branch_peak(few)) / (many - few)
    out = {
        "mask_branch_bytes_per_roi": round(per_roi),
        "positives_per_image": {
            "maskrcnn_resnet50_fpn_1333": torchvision_mask_rcnn(1.0),
            "cascade_mask_rcnn_r50_fpn": cascade_mask_rcnn(0.5),
            "mask_rcnn_swin_t_fpn_1333": swin_mask_rcnn(1.0),
        },
        "sampler_cap": many,
        "maskrcnn_resnet50_fpn_1333_step": step_peak_at_positives(False),
        "maskrcnn_resnet50_fpn_1333_step_128_positives": step_peak_at_positives(True),
        "torch": torch.__version__,
        "date": dt.date.today().isoformat(),
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
