"""The ground-truth masks a mask-classification head's loss holds at the full padded input
(mmdet Mask2FormerHead): one mask per segment, up to one a query, in int64 and the loss's
copies of them, on top of the forward's activations
(data/classic_activations.toml [query_mask_targets])."""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.label_assigner import label_assigner_term
from advisor.memory.ota_loss import ota_cost_term
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _table() -> dict:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        return tomllib.load(fh)["query_mask_targets"]


def query_mask_target_shape(
    w: Workload, spec: ModelSpec | None, size: tuple[int, int], batch: int
) -> tuple[int, int, int, int]:
    """(images, segments an image, pixels a mask, bytes a pixel-segment) of the loss's
    ground-truth masks; zeros for a model without a mask-classification head. Segments: the
    objects a question states, at most the queries (the matcher pairs each segment with one
    query), else one a query."""
    table = _table()
    if spec is None or spec.family not in table["families"]:
        return 0, 0, 0, 0
    queries = table["num_queries"]
    segments = min(w.objects_per_image or queries, queries)
    width, height = size
    return batch, segments, width * height, table["bytes_per_pixel_segment"]


def query_mask_targets_term(
    acc: Breakdown, w: Workload, spec: ModelSpec | None, size: tuple[int, int], batch: int
) -> int:
    """The loss's ground-truth masks at the padded input, and the segments it assumes."""
    images, segments, pixels, per = query_mask_target_shape(w, spec, size, batch)
    if images == 0:
        return 0
    if w.objects_per_image is None:
        acc.assume("segments_per_image", segments)
    return acc.add(
        "query_mask_targets",
        images * segments * pixels * per,
        "ground-truth masks in the mask-classification loss: int64 and its copies",
        key="query_mask_targets",
        images=images,
        segments=segments,
        size=f"{size[0]}x{size[1]}",
        bytes_per_pixel=per,
    )


def loss_target_terms(
    acc: Breakdown, w: Workload, spec: ModelSpec | None, size: tuple[int, int], batch: int
) -> int:
    """What a detector's or segmentor's loss builds from its targets beside the forward's
    activations: the YOLO label assigner, YOLOv7's OTA cost tensors, a mask-classification
    head's ground-truth masks."""
    added = label_assigner_term(acc, w, spec, size, batch) + ota_cost_term(acc, w, spec)
    return added + query_mask_targets_term(acc, w, spec, size, batch)
