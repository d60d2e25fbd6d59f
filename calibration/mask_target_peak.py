"""Does mmdet's mask-target step raise a Mask R-CNN training peak? Measured on the CPU.

    /work/torchenv/bin/python calibration/mask_target_peak.py [--scale 1.0] [--batch 2]

mmdet builds mask targets on the GPU (BitmapMasks.crop_and_resize, mmdet 2.x/3.x
mmdet/structures/mask/structures.py): the image's uint8 masks are moved to the device, one
copy per positive RoI is taken by index_select and cast to float32 before roi_align to
28x28, so one image's step holds (gt + 5 x positives) bytes per padded pixel
(calibration/gt_transients.py measured 660 B/px at 20 boxes and 128 positives). It runs after
the mask head's forward (StandardRoIHead._mask_forward_train), when the forward's saved
tensors of the whole batch are live. torchvision computes its targets at the same point
(roi_heads.maskrcnn_loss -> project_masks_on_boxes), from one float copy per box instead.

This runs torchvision's Mask R-CNN R50-FPN with OpenMMLab's trainable-affine BN (as
calibration/activations_cpu.py's bn_eval runs), records the live bytes when each image's targets
are built, and reports the mmdet step's peak (live then + its transient at 128 positives,
mmdet's rcnn sampler num 512 x pos_fraction 0.25) against the step's own peak.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import activations_cpu as ac  # noqa: E402
from torchvision.models.detection import roi_heads  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "mask_target_peak_cpu.json"
TRANSIENT_B_PER_PX = {
    20: 660.0,
    60: 700.0,
}  # calibration/data/gt_transients_cpu.json, 128 positives


class Capturing(ac.LiveStorages):
    last: Capturing | None = None

    def __init__(self) -> None:
        super().__init__()
        Capturing.last = self


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=2)
    args = ap.parse_args()
    ac.torch.manual_seed(0)
    ac.torch.set_num_threads(2)
    ac.LiveStorages = Capturing
    live_at_targets: list[int] = []
    original = roi_heads.project_masks_on_boxes

    def recording(gt_masks, boxes, matched_idxs, m):  # noqa: ANN001, ANN202
        tracker = Capturing.last
        if tracker is not None:
            live_at_targets.append(sum(delta for _, delta in tracker.timeline))
        return original(gt_masks, boxes, matched_idxs, m)

    roi_heads.project_masks_on_boxes = recording
    record = ac.detector("maskrcnn", "resnet50", args.batch, False, scale=args.scale)
    h, w = record["input"]
    padded = (-(-h // 32) * 32) * (-(-w // 32) * 32)
    out = {
        "input": [h, w],
        "padded_px": padded,
        "batch": args.batch,
        "peak_live_bytes": record["peak_live_bytes"],
        "saved_bytes": record["saved_bytes"],
        "live_at_mask_targets": live_at_targets,
    }
    for gt, per_px in TRANSIENT_B_PER_PX.items():
        mmdet_peak = max(live_at_targets) + per_px * padded
        out[f"mmdet_step_peak_gt{gt}_pos128"] = int(mmdet_peak)
        out[f"mmdet_excess_gt{gt}_pos128"] = int(max(0.0, mmdet_peak - record["peak_live_bytes"]))
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
