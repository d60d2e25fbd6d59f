"""How many boxes in one image before RPN target assignment raises a detector's peak?

    /work/torchenv/bin/python calibration/rpn_assign_peak.py [--scale 1.0] [--batch 2]

A logged training peak (mmcv 1.x `memory`: torch.cuda.max_memory_allocated, never reset,
max over ranks; detectron2 `max_mem`) is the maximum over the run, so it meets the image
with the most objects. RPN assignment (mmdet MaxIoUAssigner -> bbox_overlaps, torchvision
Matcher <- box_iou, detectron2 pairwise_iou) builds an anchors x boxes IoU matrix with a
few same-sized temporaries, one image at a time, while the batch's backbone, FPN and RPN
head activations are live. This measures (1) the live bytes at that moment in torchvision's
Faster R-CNN R50-FPN with OpenMMLab's trainable-affine BN, against the step's peak, and
(2) the bytes per (anchor x box) of mmdet 2.x bbox_overlaps (mode 'iou', not aligned,
replayed with torch ops), and prints the box count from which the peak moves.
Writes calibration/data/rpn_assign_peak_cpu.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import activations_cpu as ac  # noqa: E402
from torchvision.models.detection import rpn  # noqa: E402

torch = ac.torch
OUT = Path(__file__).resolve().parent / "data" / "rpn_assign_peak_cpu.json"


class Capturing(ac.LiveStorages):
    last: Capturing | None = None

    def __init__(self) -> None:
        super().__init__()
        Capturing.last = self


def mmdet_bbox_overlaps(b1: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    """mmdet 2.x mmdet/core/bbox/iou_calculators/iou2d_calculator.py bbox_overlaps,
    mode='iou', is_aligned=False, the lines that run for (gts, anchors)."""
    area1 = (b1[..., 2] - b1[..., 0]) * (b1[..., 3] - b1[..., 1])
    area2 = (b2[..., 2] - b2[..., 0]) * (b2[..., 3] - b2[..., 1])
    lt = torch.max(b1[..., :, None, :2], b2[..., None, :, :2])
    rb = torch.min(b1[..., :, None, 2:], b2[..., None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - overlap
    eps = union.new_tensor([1e-6])
    union = torch.max(union, eps)
    return overlap / union


def overlaps_bytes_per_pair(anchors: int, gts: int) -> float:
    g = torch.Generator().manual_seed(0)
    xy = torch.rand(anchors, 2, generator=g) * 1000
    a = torch.cat([xy, xy + 10 + torch.rand(anchors, 2, generator=g) * 200], 1)
    xy = torch.rand(gts, 2, generator=g) * 1000
    b = torch.cat([xy, xy + 10 + torch.rand(gts, 2, generator=g) * 200], 1)
    tracker = ac.LiveStorages()
    with tracker:
        ious = mmdet_bbox_overlaps(b, a)
        ious.max(dim=0)  # assign_wrt_overlaps: max over gts per anchor
        ious.max(dim=1)  # and over anchors per gt
        del ious
    return tracker.peak(exclude_storages=set()) / (anchors * gts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    ac.LiveStorages = Capturing
    live_at_assign: list[int] = []
    anchors_seen: list[int] = []
    original = rpn.RegionProposalNetwork.assign_targets_to_anchors

    def recording(self, anchors, targets):  # noqa: ANN001, ANN202
        tracker = Capturing.last
        if tracker is not None:
            live_at_assign.append(sum(delta for _, delta in tracker.timeline))
        anchors_seen.append(int(anchors[0].shape[0]))
        return original(self, anchors, targets)

    rpn.RegionProposalNetwork.assign_targets_to_anchors = recording
    record = ac.detector("fasterrcnn", "resnet50", args.batch, False, scale=args.scale)
    ac.LiveStorages = Capturing.__mro__[1]
    per_pair = overlaps_bytes_per_pair(anchors_seen[0], 20)
    margin = record["peak_live_bytes"] - max(live_at_assign)
    threshold = margin / (per_pair * anchors_seen[0])
    out = {
        "input": record["input"],
        "batch": args.batch,
        "peak_live_bytes": record["peak_live_bytes"],
        "live_at_rpn_assignment": live_at_assign,
        "anchors_per_image": anchors_seen[0],
        "mmdet_overlaps_bytes_per_anchor_box": round(per_pair, 2),
        "margin_bytes": margin,
        "boxes_before_the_peak_moves": round(threshold, 1),
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
