"""The label assigner of the anchor-free YOLO heads (YOLOv8 / YOLO11 under Ultralytics and
MMYOLO): its [batch, n_max_boxes, n_anchors] fp32 tensors, held in the loss on top of the
forward's activations (data/classic_activations.toml [label_assigner])."""

from __future__ import annotations

import math
import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _table() -> dict:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        return tomllib.load(fh)["label_assigner"]


def label_assigner_shape(
    w: Workload, spec: ModelSpec | None, size: tuple[int, int], batch: int
) -> tuple[int, int, int, int]:
    """(images, boxes padded to, anchors, bytes per element) of the task-aligned assigner's
    [batch, n_max_boxes, n_anchors] step (data/classic_activations.toml [label_assigner]);
    zeros for a model whose head assigns otherwise."""
    table = _table()
    if spec is None or spec.id not in table["models"]:
        return 0, 0, 0, 0
    width, height = size
    anchors = sum(math.ceil(width / s) * math.ceil(height / s) for s in table["strides"])
    boxes = w.objects_per_image or table["default_objects_per_image"]
    per_stack = table["bytes_per_element"]
    framework = (w.framework or "").lower()
    stack = next((name for name in per_stack if name in framework), table["default_stack"])
    return batch, boxes, anchors, per_stack[stack]


def label_assigner_term(
    acc: Breakdown, w: Workload, spec: ModelSpec | None, size: tuple[int, int], batch: int
) -> int:
    """The label assigner's [batch, n_max_boxes, n_anchors] fp32 tensors, held in the loss
    on top of the forward's activations, and the objects per image it assumes."""
    images, boxes, anchors, per = label_assigner_shape(w, spec, size, batch)
    if images == 0:
        return 0
    if w.objects_per_image is None:
        acc.assume("objects_per_image", boxes)
    return acc.add(
        "label_assigner",
        images * boxes * anchors * per,
        "task-aligned label assigner: [batch, most objects an image, anchors] fp32 tensors",
        key="label_assigner",
        images=images,
        boxes=boxes,
        anchors=anchors,
        bytes_per_element=per,
    )
