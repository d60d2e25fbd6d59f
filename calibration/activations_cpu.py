"""Measure the training activation memory of torchvision models on the CPU.

Run it with a separate interpreter that has torch and torchvision (they are not project
dependencies):

    python3 -m venv /work/torchenv && /work/torchenv/bin/pip install torch torchvision
    /work/torchenv/bin/python calibration/activations_cpu.py [--only NAME ...]

Each model is built with random weights and runs one training forward + backward (fp32,
train mode) at a stated input size and batch. Two numbers per model:

- saved_bytes: the storages autograd keeps for backward (saved_tensors_hooks), each
  storage counted once (by data_ptr), parameters and buffers left out: the classic
  "activations" term.
- peak_live_bytes: the peak of all storages created during the step (a TorchDispatchMode
  that registers every op's output storage and a finalizer for its release), parameter
  gradients left out: saved activations plus the loss and the backward's transients at
  its worst moment, what a GPU allocator would have to hold beside weights, gradients and
  optimizer state.

Detection models are built the way torchvision builds them over a pretrained backbone
(FrozenBatchNorm2d, stem + layer1 frozen: trainable_backbone_layers=3, as detectron2's
FREEZE_AT=2); the `bn_eval` variant instead keeps nn.BatchNorm2d in eval mode with
trainable affine weights, as OpenMMLab detectors do (norm_cfg requires_grad=True,
norm_eval=True), which makes every BN keep its input for backward. Detection inputs are
1333x800 (the 800 / 1333 resize both stacks use) or half of it per side to save CPU time,
padded to a multiple of 32 by the model's own transform (size_divisible=32, as mmdet's
and detectron2's).

Results go to calibration/data/activations_cpu.json (one record per model, with the setup).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import platform
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import torch
import torchvision
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torchvision.models import detection, segmentation
from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor
from torchvision.ops import FrozenBatchNorm2d
from torchvision.ops.feature_pyramid_network import LastLevelP6P7

OUT = Path(__file__).resolve().parent / "data" / "activations_cpu.json"
DETECTION_SIZE = (800, 1333)  # (height, width) after torchvision's / mmdet's resize


class LiveStorages(TorchDispatchMode):
    """Tracks every storage an op creates and when it is released: a timeline of
    (+bytes / -bytes, key) from which the peak is replayed afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}  # data_ptr -> allocation number
        self.timeline: list[tuple[int, int]] = []  # (allocation number, +/- bytes)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        key, size = storage.data_ptr(), storage.nbytes()
        if size == 0 or key in self.live:
            return
        number = len(self.timeline)
        self.live[key] = number
        self.timeline.append((number, size))
        weakref.finalize(storage, self._release, key, number, size)

    def _release(self, key: int, number: int, size: int) -> None:
        if self.live.get(key) == number:
            del self.live[key]
            self.timeline.append((number, -size))

    def peak(self, exclude_storages: set[int]) -> int:
        """Peak of the replayed timeline without the allocations still live at the end
        under `exclude_storages` (the parameters' gradients): an address can be reused,
        so the allocation, not the address, is left out."""
        exclude = {self.live[k] for k in exclude_storages if k in self.live}
        current = peak = 0
        for number, delta in self.timeline:
            if number in exclude:
                continue
            current += delta
            peak = max(peak, current)
        return peak


def count_step(model: nn.Module, step: Callable[[], torch.Tensor]) -> dict:
    """One forward + backward; saved-for-backward bytes and the peak of live storages."""
    model_storages = {
        t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers()]
    }
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in model_storages:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    tracker = LiveStorages()
    start = time.perf_counter()
    with tracker:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = step()
        saved_bytes = sum(saved.values())
        loss.backward()
        del loss
    grads = {p.grad.untyped_storage().data_ptr() for p in model.parameters() if p.grad is not None}
    seconds = time.perf_counter() - start
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {
        "saved_bytes": saved_bytes,
        "peak_live_bytes": tracker.peak(exclude_storages=grads),
        "params": sum(p.numel() for p in model.parameters()),
        "trainable_params": trainable,
        "seconds": round(seconds, 1),
    }


def classifier_step(model: nn.Module, size: int, batch: int, classes: int = 1000) -> dict:
    """One cross-entropy training step of an image classifier on random square images,
    counted (count_step); the model as built by the caller (a stack's own variant of it)."""
    images = torch.randn(batch, 3, size, size)
    labels = torch.randint(0, classes, (batch,))
    loss_fn = nn.CrossEntropyLoss()
    return count_step(model, lambda: loss_fn(model(images), labels))


def classification(name: str, size: int, batch: int) -> dict:
    model = torchvision.models.get_model(name, weights=None).train()
    out = classifier_step(model, size, batch)
    return out | {"task": "classification", "input": [size, size], "batch": batch}


def semantic_segmentation(name: str, size: int, batch: int) -> dict:
    model = segmentation.__dict__[name](weights=None, weights_backbone=None, aux_loss=True)
    model.train()
    images = torch.randn(batch, 3, size, size)
    labels = torch.randint(0, 21, (batch, size, size))
    loss_fn = nn.CrossEntropyLoss()

    def step() -> torch.Tensor:
        out = model(images)
        return loss_fn(out["out"], labels) + 0.5 * loss_fn(out["aux"], labels)

    out = count_step(model, step)
    return out | {"task": "segmentation", "input": [size, size], "batch": batch}


def mmseg_segmentation(
    backbone: str, head: str, classes: int, crop: tuple[int, int], amp: bool = False
) -> dict:
    """A segmentor as the MMSegmentation config builds it (calibration/dense_nets.py), batch 2
    (BatchNorm in train mode needs two samples for the image-pooling branch), the loss on
    logits resized to the crop; per-pixel figures are what the catalog keeps."""
    from dense_nets import build_segmentor

    model = build_segmentor(backbone, head, classes).train()
    batch = 2
    images = torch.randn(batch, 3, *crop)
    labels = torch.randint(0, classes, (batch, *crop))
    if amp:
        # CPU autocast to bf16 stands in for CUDA fp16 AMP (mmcv's AmpOptimWrapper): the
        # same policy keeps convolutions / matmuls in 16 bits and norms, softmax and the
        # loss in fp32; weights, gradients and optimizer state stay fp32.
        def step() -> torch.Tensor:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return model(images, labels)

        out = count_step(model, step)
    else:
        out = count_step(model, lambda: model(images, labels))
    pixels = batch * crop[0] * crop[1]
    return out | {
        "task": "segmentation",
        "stack": "mmsegmentation-style (calibration/dense_nets.py), BN train mode, aux FCN head x0.4",
        "backbone": backbone,
        "head": head,
        "classes": classes,
        "amp": "bf16 autocast" if amp else None,
        "input": list(crop),
        "batch": batch,
        "saved_bytes_per_pixel": round(out["saved_bytes"] / pixels, 1),
        "peak_live_bytes_per_pixel": round(out["peak_live_bytes"] / pixels, 1),
    }


def fpn_backbone(arch: str, frozen_bn: bool, one_stage: bool = False) -> nn.Module:
    """torchvision's detection backbone over a pretrained network, built with random
    weights: FrozenBatchNorm2d (or OpenMMLab's trainable-affine BN), layers 2-4 trained.
    One-stage detectors (RetinaNet, FCOS) take P3-P7 (C3-C5 plus P6/P7), two-stage ones
    P2-P6, as torchvision's builders do."""
    norm = FrozenBatchNorm2d if frozen_bn else nn.BatchNorm2d
    body = torchvision.models.get_model(arch, norm_layer=norm)
    if one_stage:
        return _resnet_fpn_extractor(body, 3, [2, 3, 4], LastLevelP6P7(256, 256))
    return _resnet_fpn_extractor(body, 3)


DETECTORS: dict[str, Callable[..., nn.Module]] = {
    "fasterrcnn": lambda b, **kw: detection.FasterRCNN(b, num_classes=91, **kw),
    "maskrcnn": lambda b, **kw: detection.MaskRCNN(b, num_classes=91, **kw),
    "keypointrcnn": lambda b, **kw: detection.KeypointRCNN(b, num_classes=2, **kw),
    "retinanet": lambda b, **kw: detection.RetinaNet(b, num_classes=91, **kw),
    "fcos": lambda b, **kw: detection.FCOS(b, num_classes=91, **kw),
}


def targets_for(kind: str, batch: int, h: int, w: int) -> list[dict]:
    g = torch.Generator().manual_seed(0)
    out = []
    for _ in range(batch):
        n = 7  # COCO averages ~7 objects per image
        xy = torch.rand(n, 2, generator=g) * torch.tensor([w * 0.7, h * 0.7])
        wh = 32 + torch.rand(n, 2, generator=g) * torch.tensor([w * 0.25, h * 0.25])
        t = {"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, 91, (n,))}
        if kind == "maskrcnn":
            t["masks"] = torch.zeros(n, h, w, dtype=torch.uint8)
        if kind == "keypointrcnn":
            t["labels"] = torch.ones(n, dtype=torch.int64)
            kp = t["boxes"][:, None, :2] + torch.rand(n, 17, 2, generator=g) * 30
            t["keypoints"] = torch.cat([kp, torch.ones(n, 17, 1)], 2)
        out.append(t)
    return out


def detector(kind: str, arch: str, batch: int, frozen_bn: bool = True, scale: float = 0.5) -> dict:
    """`scale` shrinks the 1333x800 input (2 shared CPU cores); the resize bounds of the
    model's transform shrink with it, so the image is not scaled back up."""
    h, w = (round(side * scale) for side in DETECTION_SIZE)
    backbone = fpn_backbone(arch, frozen_bn, one_stage=kind in ("retinanet", "fcos"))
    model = DETECTORS[kind](backbone, min_size=h, max_size=w).train()
    if not frozen_bn:
        for m in model.backbone.body.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()  # norm_eval=True: running statistics fixed, affine trained
    images = [torch.randn(3, h, w) for _ in range(batch)]
    targets = targets_for(kind, batch, h, w)
    out = count_step(model, lambda: sum(model(images, targets).values()))
    return out | {
        "task": "detection",
        "backbone": arch,
        "bn": "frozen" if frozen_bn else "eval_trainable_affine",
        "input": [h, w],
        "batch": batch,
    }


def mmdet_body(arch: str) -> nn.Module:
    """A ResNet / ResNeXt as mmdet trains it: nn.BatchNorm2d in eval mode with trainable
    affine weights (norm_eval=True, requires_grad=True). ResNeXt-101 32x4d is built from
    torchvision's ResNet class (torchvision ships 32x8d and 64x4d only)."""
    if arch == "resnext101_32x4d":
        from torchvision.models.resnet import Bottleneck, ResNet

        return ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=4)
    return torchvision.models.get_model(arch)


def bn_eval(model: nn.Module) -> nn.Module:
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()  # norm_eval=True: running statistics fixed, affine trained
    return model


def mmdet_targets(batch: int, h: int, w: int, masks: bool) -> list[dict]:
    """COCO-like targets for 80-class mmdet heads (labels 1..80, 0 is background)."""
    targets = targets_for("maskrcnn" if masks else "fasterrcnn", batch, h, w)
    for t in targets:
        t["labels"] = t["labels"] % 80 + 1
    return targets


def cascade(arch: str, with_mask: bool, batch: int = 1, scale: float = 0.5) -> dict:
    """Cascade (Mask) R-CNN as mmdet configures it (calibration/dense_detectors.py) over an
    mmdet-style FPN backbone (stem + layer1 frozen, BN eval with trainable affine)."""
    from dense_detectors import CascadeRCNN

    h, w = (round(side * scale) for side in DETECTION_SIZE)
    backbone = _resnet_fpn_extractor(mmdet_body(arch), 3)
    base = detection.FasterRCNN(backbone, num_classes=81, min_size=h, max_size=w)
    model = bn_eval(CascadeRCNN(base, with_mask).train())
    images = [torch.randn(3, h, w) for _ in range(batch)]
    targets = mmdet_targets(batch, h, w, with_mask)
    out = count_step(model, lambda: model(images, targets))
    return out | {
        "task": "detection",
        "backbone": arch,
        "bn": "eval_trainable_affine",
        "input": [h, w],
        "batch": batch,
    }


def swin_mask_rcnn(name: str, batch: int = 1, scale: float = 0.5) -> dict:
    from dense_detectors import swin_mask_rcnn as build

    h, w = (round(side * scale) for side in DETECTION_SIZE)
    model = build(name, h, w).train()
    images = [torch.randn(3, h, w) for _ in range(batch)]
    targets = mmdet_targets(batch, h, w, True)
    out = count_step(model, lambda: sum(model(images, targets).values()))
    return out | {"task": "detection", "backbone": name, "input": [h, w], "batch": batch}


class Detr(nn.Module):
    """DETR R50 (arXiv 2005.12872, facebookresearch/detr defaults): FrozenBN ResNet-50
    with layers 2-4 trained, 1x1 projection to 256, nn.Transformer 6 + 6 layers (8 heads,
    FFN 2048, dropout 0.1) over the stride-32 map with a learned positional embedding, 100
    queries, class + box heads with aux outputs. The Hungarian matcher is left out (it
    saves nothing for backward); the loss is cross-entropy + L1 on fixed targets."""

    def __init__(self) -> None:
        super().__init__()
        resnet = torchvision.models.resnet50(norm_layer=FrozenBatchNorm2d)
        self.body = nn.Sequential(*list(resnet.children())[:-2])
        for name, p in self.body.named_parameters():
            p.requires_grad_(name.split(".")[0] in ("5", "6", "7"))  # layer2..layer4
        self.proj = nn.Conv2d(2048, 256, 1)
        self.pos = nn.Parameter(torch.randn(1, 256, 50, 50))
        self.transformer = nn.Transformer(256, 8, 6, 6, 2048, 0.1, batch_first=True)
        self.queries = nn.Parameter(torch.randn(100, 256))
        self.cls = nn.Linear(256, 92)
        self.box = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.proj(self.body(x))
        h, w = f.shape[-2:]
        src = (f + self.pos[:, :, :h, :w]).flatten(2).transpose(1, 2)
        tgt = self.queries.expand(x.shape[0], -1, -1)
        hs = self.transformer(src, tgt)
        logits, boxes = self.cls(hs), self.box(hs).sigmoid()
        labels = torch.zeros(logits.shape[:2], dtype=torch.long)
        return (
            nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
            + (boxes - 0.5).abs().mean()
        )


def detr(batch: int, scale: float = 0.5) -> dict:
    h, w = (round(side * scale) for side in DETECTION_SIZE)
    model = Detr().train()
    images = torch.randn(batch, 3, h, w)
    out = count_step(model, lambda: model(images))
    return out | {"task": "detection", "backbone": "resnet50", "input": [h, w], "batch": batch}


def _seven_boxes_batch(size: int, batch: int) -> dict:
    """The Ultralytics trainer's batch for `batch` random images of `size` px with 7 COCO
    boxes each (the same tensors, in the same order, under the same seed for every model)."""
    g = torch.Generator().manual_seed(0)
    n = 7 * batch
    xy = 0.1 + torch.rand(n, 2, generator=g) * 0.6
    return {
        "img": torch.rand(batch, 3, size, size),
        "cls": torch.randint(0, 80, (n, 1)).float(),
        "bboxes": torch.cat([xy, 0.05 + torch.rand(n, 2, generator=g) * 0.2], 1),
        "batch_idx": torch.arange(batch).repeat_interleave(7).float(),
    }


def _ultralytics_step(model, cfg: str, size: int, batch: int) -> dict:
    """One training step of an Ultralytics model on that batch, through its own loss as its
    trainer calls it, with the setup the catalog row records."""
    batch_dict = _seven_boxes_batch(size, batch)
    out = count_step(model, lambda: model.loss(batch_dict)[0].sum())
    return out | {
        "task": "detection",
        "backbone": cfg,
        "input": [size, size],
        "batch": batch,
        "reference_input": size,
    }


def yolo(cfg: str, size: int, batch: int) -> dict:
    """Ultralytics YOLO built from its bundled yaml (random weights), its own training loss
    (v8DetectionLoss: task-aligned assigner, BCE + CIoU + DFL) on 7 boxes per image."""
    from ultralytics.cfg import get_cfg
    from ultralytics.nn.tasks import DetectionModel

    model = DetectionModel(cfg, nc=80, verbose=False).train()
    model.args = get_cfg()
    return _ultralytics_step(model, cfg, size, batch)


def rtdetr(cfg: str, size: int, batch: int) -> dict:
    """Ultralytics RT-DETR built from its bundled yaml (random weights, HGNetv2 backbone,
    hybrid encoder, 6-layer decoder with 300 queries and denoising groups), its own loss
    (RTDETRDetectionModel.loss: Hungarian matching, VFL + L1 + GIoU over every decoder
    layer) on 7 boxes per image, as its trainer calls it."""
    from ultralytics.nn.tasks import RTDETRDetectionModel

    model = RTDETRDetectionModel(cfg, nc=80, verbose=False).train()
    model.nc = 80  # set by the trainer from the data set (DetectionTrainer.set_model_attributes)
    return _ultralytics_step(model, cfg, size, batch)


def yolov5_repo(cfg: str, size: int, batch: int) -> dict:
    """ultralytics/yolov5's own Model (models/yolo.py, random weights) and ComputeLoss
    (utils/loss.py: objectness, class and box losses over its anchors) on 7 boxes per image,
    from the checkout at $YOLOV5_REPO (tag v7.0 runs without the ultralytics package)."""
    import os
    import sys

    repo = os.environ["YOLOV5_REPO"]
    sys.path.insert(0, repo)
    from models.yolo import Model  # type: ignore[import-not-found]
    from utils.loss import ComputeLoss  # type: ignore[import-not-found]

    model = Model(f"{repo}/models/{cfg}", ch=3, nc=80).train()
    # hyp.scratch-low.yaml's loss gains (they scale the loss, not the memory)
    model.hyp = {"box": 0.05, "cls": 0.5, "cls_pw": 1.0, "obj": 1.0, "obj_pw": 1.0}
    model.hyp |= {"anchor_t": 4.0, "fl_gamma": 0.0, "label_smoothing": 0.0}
    loss = ComputeLoss(model)
    g = torch.Generator().manual_seed(0)
    n = 7 * batch
    xy = 0.1 + torch.rand(n, 2, generator=g) * 0.6
    targets = torch.cat(
        [
            torch.arange(batch).repeat_interleave(7).float()[:, None],
            torch.randint(0, 80, (n, 1)).float(),
            xy,
            0.05 + torch.rand(n, 2, generator=g) * 0.2,
        ],
        1,
    )
    images = torch.rand(batch, 3, size, size)
    out = count_step(model, lambda: loss(model(images), targets)[0].sum())
    return out | {
        "task": "detection",
        "backbone": f"ultralytics/yolov5 v7.0 models/{cfg}",
        "input": [size, size],
        "batch": batch,
        "reference_input": size,
    }


# (record name, thunk). Classification at 224x224 batch 2, segmentation at 512 batch 2,
# detection at 667x400 batch 1 (Faster R-CNN R50 also at the full 1333x800, to check how
# the figure scales with the area): the per-sample figure is what the catalog keeps.
CASES: list[tuple[str, Callable[[], dict]]] = [
    *[
        (n, lambda n=n: classification(n, 224, 2))
        for n in [
            "resnet18",
            "resnet50",
            "resnet101",
            "resnext50_32x4d",
            "resnext101_32x8d",
            "mobilenet_v2",
            "mobilenet_v3_large",
            "efficientnet_b0",
            "efficientnet_b3",
            "efficientnet_b7",
            "convnext_tiny",
            "convnext_base",
            "densenet121",
            "vit_b_16",
            "vit_l_16",
            "swin_t",
            "swin_b",
        ]
    ],
    *[
        (n, lambda n=n: semantic_segmentation(n, 512, 2))
        for n in ["deeplabv3_resnet50", "fcn_resnet50", "deeplabv3_mobilenet_v3_large"]
    ],
    # MMSeg-style segmentors at a 256x512 crop (Swin: 224x448, a multiple of its 7x7
    # windows at every stage), batch 2; 19 classes (Cityscapes) for the dilated-ResNet and
    # HRNet models, 150 (ADE20K) for UPerNet, as their main configs.
    *[
        (f"mmseg_{name}", lambda a=args: mmseg_segmentation(*a))
        for name, args in {
            "fcn_r50_d8": ("r50", "fcn", 19, (256, 512)),
            "fcn_r101_d8": ("r101", "fcn", 19, (256, 512)),
            "deeplabv3_r50_d8": ("r50", "aspp", 19, (256, 512)),
            "deeplabv3_r101_d8": ("r101", "aspp", 19, (256, 512)),
            "deeplabv3plus_r50_d8": ("r50", "sep_aspp", 19, (256, 512)),
            "deeplabv3plus_r101_d8": ("r101", "sep_aspp", 19, (256, 512)),
            "upernet_r50": ("r50", "uper", 150, (256, 512)),
            "upernet_r50_19cls": ("r50", "uper", 19, (256, 512)),
            "upernet_r101": ("r101", "uper", 150, (256, 512)),
            "fcn_hrnet_w18": ("hrnet_w18", "hr_fcn", 19, (256, 512)),
            "fcn_hrnet_w48": ("hrnet_w48", "hr_fcn", 19, (256, 512)),
            # one full-resolution loss at ADE20K's classes: the per-class cost of a
            # segmentor without an auxiliary head (data/classic_activations.toml)
            "fcn_hrnet_w18_150cls": ("hrnet_w18", "hr_fcn", 150, (256, 512)),
            "ocrnet_hrnet_w18": ("hrnet_w18", "hr_ocr", 19, (256, 512)),
            "ocrnet_hrnet_w48": ("hrnet_w48", "hr_ocr", 19, (256, 512)),
            "upernet_swin_t": ("swin_tiny_patch4_window7_224", "uper", 150, (224, 448)),
            "upernet_swin_s": ("swin_small_patch4_window7_224", "uper", 150, (224, 448)),
            "upernet_swin_b": ("swin_base_patch4_window7_224", "uper", 150, (224, 448)),
            "upernet_convnext_t": ("convnext_tiny", "uper", 150, (256, 512)),
            # checks against MMSeg's logged memory (PSPNet is in the shared cases) and the
            # mixed-precision ratio of a CNN and of a transformer backbone. The *_amp runs
            # were not completed on 2026-12-01: bf16 autocast on a CPU without AVX512-BF16
            # ran >6 min per model and was stopped; run them where bf16 is native.
            "pspnet_r50_d8": ("r50", "psp", 19, (256, 512)),
            "pspnet_r101_d8": ("r101", "psp", 19, (256, 512)),
            "pspnet_r101_d8_amp": ("r101", "psp", 19, (256, 512), True),
            "deeplabv3plus_r50_d8_amp": ("r50", "sep_aspp", 19, (256, 512), True),
            "upernet_swin_t_amp": ("swin_tiny_patch4_window7_224", "uper", 150, (224, 448), True),
        }.items()
    ],
    ("fasterrcnn_resnet50_fpn", lambda: detector("fasterrcnn", "resnet50", 1)),
    ("fasterrcnn_resnet50_fpn_1333", lambda: detector("fasterrcnn", "resnet50", 1, scale=1.0)),
    ("fasterrcnn_resnet50_fpn_bn_eval", lambda: detector("fasterrcnn", "resnet50", 1, False)),
    # full-size runs of the half-size entries (det, 2026-12-01): the x0.86 area check was
    # R50's; a deeper backbone has a smaller fixed (per-image head) share.
    ("fasterrcnn_resnet101_fpn_1333", lambda: detector("fasterrcnn", "resnet101", 1, scale=1.0)),
    (
        "fasterrcnn_resnext101_32x8d_fpn_1333",
        lambda: detector("fasterrcnn", "resnext101_32x8d", 1, scale=1.0),
    ),
    ("retinanet_resnet50_fpn_1333", lambda: detector("retinanet", "resnet50", 1, scale=1.0)),
    ("maskrcnn_resnet50_fpn_1333", lambda: detector("maskrcnn", "resnet50", 1, scale=1.0)),
    ("fasterrcnn_resnet101_fpn", lambda: detector("fasterrcnn", "resnet101", 1)),
    ("fasterrcnn_resnext101_32x8d_fpn", lambda: detector("fasterrcnn", "resnext101_32x8d", 1)),
    ("fasterrcnn_resnext101_64x4d_fpn", lambda: detector("fasterrcnn", "resnext101_64x4d", 1)),
    ("retinanet_resnet50_fpn", lambda: detector("retinanet", "resnet50", 1)),
    ("retinanet_resnet101_fpn", lambda: detector("retinanet", "resnet101", 1)),
    ("retinanet_resnet50_fpn_bn_eval", lambda: detector("retinanet", "resnet50", 1, False)),
    # gap, 2026-12-01: OpenMMLab's trainable-affine BN on the deeper backbones. The R50 pair
    # adds the same bytes to Faster R-CNN and RetinaNet (the BN inputs of layers 2-4), so
    # the extra belongs to the backbone, not to a ratio of the whole detector.
    ("fasterrcnn_resnet101_fpn_bn_eval", lambda: detector("fasterrcnn", "resnet101", 1, False)),
    (
        "fasterrcnn_resnext101_32x8d_fpn_bn_eval",
        lambda: detector("fasterrcnn", "resnext101_32x8d", 1, False),
    ),
    ("retinanet_resnet101_fpn_bn_eval", lambda: detector("retinanet", "resnet101", 1, False)),
    (
        "fasterrcnn_resnet50_fpn_bn_eval_1333",
        lambda: detector("fasterrcnn", "resnet50", 1, False, scale=1.0),
    ),
    ("fcos_resnet50_fpn", lambda: detector("fcos", "resnet50", 1)),
    ("maskrcnn_resnet50_fpn", lambda: detector("maskrcnn", "resnet50", 1)),
    ("keypointrcnn_resnet50_fpn", lambda: detector("keypointrcnn", "resnet50", 1)),
    ("detr_resnet50", lambda: detr(1)),
    # mmdet-style detectors torchvision lacks (calibration/dense_detectors.py), 667x400, batch 1.
    ("cascade_rcnn_r50_fpn", lambda: cascade("resnet50", False)),
    ("cascade_mask_rcnn_r50_fpn", lambda: cascade("resnet50", True)),
    ("cascade_rcnn_x101_32x4d_fpn", lambda: cascade("resnext101_32x4d", False)),
    ("cascade_mask_rcnn_x101_32x4d_fpn", lambda: cascade("resnext101_32x4d", True)),
    ("cascade_mask_rcnn_x101_64x4d_fpn", lambda: cascade("resnext101_64x4d", True)),
    ("mask_rcnn_swin_t_fpn", lambda: swin_mask_rcnn("swin_tiny_patch4_window7_224")),
    ("mask_rcnn_swin_s_fpn", lambda: swin_mask_rcnn("swin_small_patch4_window7_224")),
    # full size (det, 2026-12-01): calibration/dense_catalog.py takes a *_1333 record over the
    # half-size one scaled by the R50 area check
    (
        "mask_rcnn_swin_t_fpn_1333",
        lambda: swin_mask_rcnn("swin_tiny_patch4_window7_224", scale=1.0),
    ),
    ("cascade_rcnn_r50_fpn_1333", lambda: cascade("resnet50", False, scale=1.0)),
    ("yolov8n", lambda: yolo("yolov8n.yaml", 640, 2)),
    ("yolov8s", lambda: yolo("yolov8s.yaml", 640, 2)),
    ("yolov8m", lambda: yolo("yolov8m.yaml", 640, 2)),
    ("yolov8x", lambda: yolo("yolov8x.yaml", 640, 2)),
    # Ultralytics' yolov5.yaml (the C3 backbone and PAN neck of ultralytics/yolov5, with
    # the anchor-free head of YOLOv8: "YOLOv5u")
    ("yolov5mu", lambda: yolo("yolov5m.yaml", 640, 2)),
    ("yolov5xu", lambda: yolo("yolov5x.yaml", 640, 2)),
    # ultralytics/yolov5 itself (tag v7.0: anchor-based Detect head and its ComputeLoss),
    # from a checkout named by YOLOV5_REPO
    *[(f"yolov5{s}", lambda s=s: yolov5_repo(f"yolov5{s}.yaml", 640, 2)) for s in "nsmlx"],
    # Ultralytics RT-DETR (ultralytics 8.3.0's rtdetr-l.yaml, rtdetr-x.yaml), 640x640, batch 2.
    ("rtdetr-l", lambda: rtdetr("rtdetr-l.yaml", 640, 2)),
    ("rtdetr-x", lambda: rtdetr("rtdetr-x.yaml", 640, 2)),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="record names to (re)measure; others are kept")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    old = json.loads(OUT.read_text())["models"] if OUT.exists() else {}
    results = dict(old) if args.only else {}
    for name, run in CASES:
        if args.only and name not in args.only:
            continue
        record = run() | {"date": dt.date.today().isoformat()}
        per_sample = record["peak_live_bytes"] / record["batch"]
        print(
            f"{name:36s} params {record['params'] / 1e6:6.1f}M  saved "
            f"{record['saved_bytes'] / 2**20:8.0f} MiB  peak {record['peak_live_bytes'] / 2**20:8.0f}"
            f" MiB  per sample {per_sample / 1e6:7.0f} MB  {record['seconds']}s",
            flush=True,
        )
        results[name] = record
        gc.collect()
        write_results(results)  # after each model: a long run stopped midway keeps its part


def _timm_version() -> str | None:
    try:
        import timm
    except ImportError:
        return None
    return timm.__version__


def write_results(results: dict) -> None:
    OUT.parent.mkdir(exist_ok=True)
    setup = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "timm": _timm_version(),
        "python": platform.python_version(),
        "device": "cpu",
        "dtype": "fp32",
        "mode": "train(): one forward + backward, random weights",
        "date": dt.date.today().isoformat(),
        "script": "calibration/activations_cpu.py",
    }
    OUT.write_text(json.dumps({"setup": setup, "models": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
