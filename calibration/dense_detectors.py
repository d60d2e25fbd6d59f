"""MMDetection detectors torchvision does not ship, over torchvision's building blocks.

- Cascade R-CNN / Cascade Mask R-CNN (arXiv 1712.00726; mmdet configs/_base_/models/
  cascade-{rcnn,mask-rcnn}_r50_fpn.py, read 2026-11-30): the RPN and FPN of Faster R-CNN,
  then three RoI stages with IoU thresholds 0.5 / 0.6 / 0.7, box-coder weights
  (10,10,5,5) / (20,20,10,10) / (30,30,15,15), loss weights 1 / 0.5 / 0.25, each stage
  sampling 512 RoIs per image (25% positive) from the previous stage's refined boxes
  (detached) plus the ground truth; the mask variant runs a 4-conv mask head on each
  stage's positive RoIs.
- Mask R-CNN over a Swin backbone (mmdet configs/swin/mask-rcnn_swin-t-p4-w7_fpn_1x_coco.py:
  drop_path 0.2, FPN on the four stages, LayerNorm, no BN).

Imported by calibration/activations_cpu.py.
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from torch import nn
from torchvision.models.detection import MaskRCNN
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from torchvision.models.detection.roi_heads import (
    RoIHeads,
    fastrcnn_loss,
    maskrcnn_loss,
    project_masks_on_boxes,  # noqa: F401 (used through maskrcnn_loss)
)
from torchvision.ops import FeaturePyramidNetwork, MultiScaleRoIAlign
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

CASCADE_IOU = (0.5, 0.6, 0.7)
CASCADE_BOX_WEIGHTS = ((10.0, 10.0, 5.0, 5.0), (20.0, 20.0, 10.0, 10.0), (30.0, 30.0, 15.0, 15.0))
CASCADE_LOSS_WEIGHTS = (1.0, 0.5, 0.25)
FPN_LEVELS = ["0", "1", "2", "3"]


def cascade_stage(iou: float, box_weights: tuple[float, ...], with_mask: bool) -> RoIHeads:
    mask_parts: dict = {}
    if with_mask:
        mask_parts = {
            "mask_roi_pool": MultiScaleRoIAlign(FPN_LEVELS, 14, 2),
            "mask_head": MaskRCNNHeads(256, [256, 256, 256, 256], 1),
            "mask_predictor": MaskRCNNPredictor(256, 256, 81),
        }
    return RoIHeads(
        MultiScaleRoIAlign(FPN_LEVELS, 7, 2),
        TwoMLPHead(256 * 7 * 7, 1024),
        FastRCNNPredictor(1024, 81),
        iou,
        iou,
        512,
        0.25,
        box_weights,
        0.05,
        0.5,
        100,
        **mask_parts,
    )


class CascadeRCNN(nn.Module):
    """A torchvision Faster R-CNN's transform, backbone and RPN with three cascade stages."""

    def __init__(self, base: nn.Module, with_mask: bool) -> None:
        super().__init__()
        self.transform, self.backbone, self.rpn = base.transform, base.backbone, base.rpn
        self.stages = nn.ModuleList(
            cascade_stage(iou, w, with_mask)
            for iou, w in zip(CASCADE_IOU, CASCADE_BOX_WEIGHTS, strict=True)
        )

    def forward(self, images: list[torch.Tensor], targets: list[dict]) -> torch.Tensor:
        images, targets = self.transform(images, targets)
        features = self.backbone(images.tensors)
        proposals, rpn_losses = self.rpn(images, features, targets)
        total = sum(rpn_losses.values())
        for stage, weight in zip(self.stages, CASCADE_LOSS_WEIGHTS, strict=True):
            props, matched, labels, reg_targets = stage.select_training_samples(proposals, targets)
            feats = stage.box_head(stage.box_roi_pool(features, props, images.image_sizes))
            logits, regression = stage.box_predictor(feats)
            cls_loss, box_loss = fastrcnn_loss(logits, regression, labels, reg_targets)
            total = total + weight * (cls_loss + box_loss)
            if stage.has_mask():
                total = total + weight * self._mask_loss(
                    stage, features, props, matched, labels, targets, images.image_sizes
                )
            # the next stage samples from this stage's refined boxes (its ground-truth
            # class's regression), detached as in mmdet's refine_bboxes
            boxes = stage.box_coder.decode(regression.detach(), props).reshape(-1, 81, 4)
            label_all = torch.cat(labels)
            refined = boxes[torch.arange(len(label_all)), label_all]
            proposals = list(refined.split([len(p) for p in props]))
        return total

    @staticmethod
    def _mask_loss(
        stage: RoIHeads,
        features: OrderedDict,
        props: list[torch.Tensor],
        matched: list[torch.Tensor],
        labels: list[torch.Tensor],
        targets: list[dict],
        sizes: list[tuple[int, int]],
    ) -> torch.Tensor:
        pos = [torch.where(lab > 0)[0] for lab in labels]
        pos_props = [p[i] for p, i in zip(props, pos, strict=True)]
        pos_matched = [m[i] for m, i in zip(matched, pos, strict=True)]
        mask_feats = stage.mask_head(stage.mask_roi_pool(features, pos_props, sizes))
        mask_logits = stage.mask_predictor(mask_feats)
        gt_masks = [t["masks"] for t in targets]
        gt_labels = [t["labels"] for t in targets]
        return maskrcnn_loss(mask_logits, pos_props, gt_masks, gt_labels, pos_matched)


class SwinFPN(nn.Module):
    """timm Swin (random weights, any input size: windows padded) + torchvision FPN with
    the extra max-pooled level, as mmdet's Swin Mask R-CNN."""

    def __init__(self, name: str) -> None:
        super().__init__()
        import timm

        self.body = timm.create_model(
            name, pretrained=False, features_only=True, strict_img_size=False, drop_path_rate=0.2
        )
        self.fpn = FeaturePyramidNetwork(
            self.body.feature_info.channels(), 256, extra_blocks=LastLevelMaxPool()
        )
        self.out_channels = 256

    def forward(self, x: torch.Tensor) -> OrderedDict:
        feats = [f.permute(0, 3, 1, 2) for f in self.body(x)]  # timm Swin maps are NHWC
        return self.fpn(OrderedDict(zip(FPN_LEVELS, feats, strict=True)))


def swin_mask_rcnn(name: str, min_size: int, max_size: int) -> nn.Module:
    return MaskRCNN(SwinFPN(name), num_classes=81, min_size=min_size, max_size=max_size)
