"""Measure what the ground truth of one image adds to a detector's training peak, on the CPU.

    /work/torchenv/bin/python calibration/gt_transients.py

calibration/activations_cpu.py measures detectors with 7 ground-truth boxes per image (COCO's
mean). A reported training peak (mmcv's `memory`, detectron2's `max_mem`) is the maximum
over the whole run, so it is reached at the image with the most objects. Target assignment
builds an IoU matrix of every anchor against every ground-truth box, with a few same-sized
temporaries (torchvision box_iou / detectron2 pairwise_iou / mmdet bbox_overlaps: the
pairwise max, min, width-height and intersection, then the union), while the forward's
saved tensors are all live. This script runs the same torchvision Faster R-CNN and
RetinaNet step as activations_cpu.py with n and with 7 boxes and reports the peak
difference per (anchor x extra box), the figure advisor/data/classic_activations.toml
[detection_targets] uses.

It also replays mmdet's mask-target step (BitmapMasks.crop_and_resize, mmdet 2.x/3.x
mmdet/structures/mask/structures.py: the image's uint8 masks moved to the device, one
copy per positive RoI by index_select, cast to float32, roi_align to 28x28) with torch
ops on random masks, to check its transient bytes per padded pixel and RoI.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torchvision.models import detection
from torchvision.ops import roi_align

sys.path.insert(0, str(Path(__file__).resolve().parent))
from activations_cpu import DETECTION_SIZE, LiveStorages, count_step, fpn_backbone  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "gt_transients_cpu.json"
SCALE = 0.5  # half of 1333x800 per side, as activations_cpu.py (2 shared CPU cores)


def boxes(n: int, h: int, w: int) -> dict:
    g = torch.Generator().manual_seed(n)
    xy = torch.rand(n, 2, generator=g) * torch.tensor([w * 0.7, h * 0.7])
    wh = 8 + torch.rand(n, 2, generator=g) * torch.tensor([w * 0.25, h * 0.25])
    return {"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, 91, (n,))}


def anchors_per_image(model: torch.nn.Module, h: int, w: int) -> int:
    images, _ = model.transform([torch.zeros(3, h, w)])
    feats = model.backbone(images.tensors)
    gen = model.rpn.anchor_generator if hasattr(model, "rpn") else model.anchor_generator
    return int(gen(images, list(feats.values()))[0].shape[0])


def detector_peak(kind: str, n: int) -> tuple[int, int]:
    h, w = (round(side * SCALE) for side in DETECTION_SIZE)
    one_stage = kind == "retinanet"
    backbone = fpn_backbone("resnet50", frozen_bn=True, one_stage=one_stage)
    build = detection.RetinaNet if one_stage else detection.FasterRCNN
    model = build(backbone, num_classes=91, min_size=h, max_size=w).train()
    with torch.no_grad():
        anchors = anchors_per_image(model, h, w)
    images = [torch.randn(3, h, w)]
    out = count_step(model, lambda: sum(model(images, [boxes(n, h, w)]).values()))
    return out["peak_live_bytes"], anchors


def mask_target_peak(num_gt: int, positives: int, h: int, w: int) -> int:
    masks = torch.randint(0, 2, (num_gt, h, w), dtype=torch.uint8)  # host-side BitmapMasks
    inds = torch.randint(0, num_gt, (positives,))
    rois = torch.cat([torch.arange(positives)[:, None].float(), boxes(positives, h, w)["boxes"]], 1)
    tracker = LiveStorages()
    with tracker:
        on_device = masks.clone()  # .to(device): the copy a GPU run allocates
        gt = on_device.index_select(0, inds).to(torch.float32)
        del on_device
        targets = roi_align(gt[:, None], rois, (28, 28), 1.0, 0, aligned=True).squeeze(1)
        del gt, targets
    return tracker.peak(exclude_storages=set())


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(2)
    results: dict = {}
    for kind in ("fasterrcnn", "retinanet"):
        base, anchors = detector_peak(kind, 7)
        for n in (50, 100):
            peak, _ = detector_peak(kind, n)
            per_pair = (peak - base) / (anchors * (n - 7))
            results[f"{kind}_r50_fpn_gt{n}"] = {
                "peak_gt7": base,
                "peak": peak,
                "anchors": anchors,
                "gt": n,
                "bytes_per_anchor_gt": round(per_pair, 1),
            }
            print(
                f"{kind} gt {n}: +{(peak - base) / 2**20:.0f} MiB, {anchors} anchors, "
                f"{per_pair:.1f} B per anchor x extra box",
                flush=True,
            )
    h, w = 800, 1344
    for num_gt, pos in ((20, 128), (60, 128)):
        peak = mask_target_peak(num_gt, pos, h, w)
        results[f"mmdet_mask_targets_gt{num_gt}_pos{pos}"] = {
            "peak": peak,
            "padded": [h, w],
            "bytes_per_px": round(peak / (h * w), 1),
        }
        print(
            f"mask targets gt {num_gt} pos {pos}: {peak / 2**20:.0f} MiB, "
            f"{peak / (h * w):.1f} B/px",
            flush=True,
        )
    setup = {
        "torch": torch.__version__,
        "device": "cpu",
        "input": [round(800 * SCALE), round(1333 * SCALE)],
        "script": "calibration/gt_transients.py",
    }
    OUT.write_text(json.dumps({"setup": setup, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
