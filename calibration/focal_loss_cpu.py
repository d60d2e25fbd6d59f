"""Measure what a fused sigmoid focal loss saves against an unfused one, on the CPU.

    /work/torchenv/bin/python calibration/focal_loss_cpu.py

The RetinaNet entries were measured with torchvision's RetinaNet, whose loss is
torchvision.ops.sigmoid_focal_loss: elementwise PyTorch ops over every (anchor, class)
pair (sigmoid, binary cross-entropy, p_t, (1 - p_t) ** gamma, alpha_t), each kept for the
backward. detectron2 does the same (fvcore sigmoid_focal_loss_jit). MMDetection on a GPU
calls mmcv's fused kernel instead (mmdet/models/losses/focal_loss.py: `if
torch.cuda.is_available() and pred.is_cuda: calculate_loss_func = sigmoid_focal_loss`),
which keeps only its input and target and writes the gradient in one pass. This script runs
torchvision's RetinaNet R50-FPN step at 1333x800 twice, once as is and once with the focal
loss replaced by an autograd Function that keeps only the logits and targets (as the fused
kernel does), and reports the peak difference per anchor and class: the figure
advisor/data/classic_activations.toml [fused_focal_loss] subtracts for mmdetection.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torchvision.models import detection
from torchvision.models.detection import retinanet as tv_retinanet
from torchvision.ops import sigmoid_focal_loss

sys.path.insert(0, str(Path(__file__).resolve().parent))
from activations_cpu import DETECTION_SIZE, count_step, fpn_backbone, targets_for  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "focal_loss_cpu.json"


class KeepInputsFocalLoss(torch.autograd.Function):
    """The fused kernel's memory: the loss is computed without keeping intermediates; the
    backward recomputes from the kept logits and targets."""

    @staticmethod
    def forward(ctx, inputs, targets, alpha, gamma, reduction):  # noqa: ANN001, ANN205
        ctx.save_for_backward(inputs, targets)
        ctx.alpha, ctx.gamma, ctx.reduction = alpha, gamma, reduction
        with torch.no_grad():
            return sigmoid_focal_loss(inputs, targets, alpha, gamma, reduction)

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        inputs, targets = ctx.saved_tensors
        with torch.enable_grad():
            x = inputs.detach().requires_grad_()
            loss = sigmoid_focal_loss(x, targets, ctx.alpha, ctx.gamma, ctx.reduction)
            (g,) = torch.autograd.grad(loss, x, grad)
        return g, None, None, None, None


def fused(inputs, targets, alpha=0.25, gamma=2.0, reduction="none"):  # noqa: ANN001, ANN201
    return KeepInputsFocalLoss.apply(inputs, targets, alpha, gamma, reduction)


def retinanet_peak() -> tuple[int, int]:
    h, w = DETECTION_SIZE
    model = detection.RetinaNet(
        fpn_backbone("resnet50", frozen_bn=True, one_stage=True),
        num_classes=91,
        min_size=h,
        max_size=w,
    ).train()
    with torch.no_grad():
        images, _ = model.transform([torch.zeros(3, h, w)])
        feats = list(model.backbone(images.tensors).values())
        anchors = int(model.anchor_generator(images, feats)[0].shape[0])
    imgs = [torch.randn(3, h, w)]
    targets = targets_for("retinanet", 1, h, w)
    out = count_step(model, lambda: sum(model(imgs, targets).values()))
    return out["peak_live_bytes"], anchors


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(2)
    unfused, anchors = retinanet_peak()
    tv_retinanet.sigmoid_focal_loss = fused
    kept_inputs, _ = retinanet_peak()
    per = (unfused - kept_inputs) / (anchors * 91)
    print(
        f"unfused {unfused / 2**20:.0f} MiB, inputs kept {kept_inputs / 2**20:.0f} MiB, "
        f"{anchors} anchors: {per:.1f} B per anchor and class"
    )
    OUT.write_text(
        json.dumps(
            {
                "torch": torch.__version__,
                "device": "cpu",
                "input": list(DETECTION_SIZE),
                "batch": 1,
                "classes": 91,
                "anchors": anchors,
                "peak_unfused": unfused,
                "peak_inputs_kept": kept_inputs,
                "bytes_per_anchor_class": round(per, 2),
                "script": "calibration/focal_loss_cpu.py",
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
