"""YOLOv7's OTA loss: the [objects, candidates, classes] fp32 tensors its build_targets
holds for one image at a time, on top of the forward's activations
(data/classic_activations.toml [ota_cost_matrices])."""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _tables() -> tuple[dict, int]:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return data["ota_cost_matrices"], data["label_assigner"]["default_objects_per_image"]


def ota_shape(w: Workload, spec: ModelSpec | None) -> tuple[int, int, int, int]:
    """(objects, candidates, classes, bytes an element) of one image's OTA cost tensors;
    zeros for a model trained without that loss. Candidates: up to 3 anchors x 3 grid cells
    an object on each detection level (find_3_positive), x 5 cells for the P6 models'
    auxiliary head (find_5_positive under train_aux.py)."""
    table, default_objects = _tables()
    if spec is None or spec.family not in table["families"] or not w.mode.is_training:
        return 0, 0, 0, 0
    levels = table["detect_levels"].get(spec.id, 3)
    aux = spec.id in table["aux_head_models"]
    cells = table["aux_cells_per_anchor"] if aux else table["cells_per_anchor"]
    objects = w.objects_per_image or default_objects
    per_object = table["anchors_per_level"] * cells * levels
    classes = w.num_classes or table["default_classes"]
    return objects, objects * per_object, classes, table["bytes_per_element"]


def ota_cost_term(acc: Breakdown, w: Workload, spec: ModelSpec | None) -> int:
    """The OTA loss's cost tensors of the most crowded image, and what it assumes of the
    data (objects an image, classes)."""
    objects, candidates, classes, per = ota_shape(w, spec)
    if objects == 0:
        return 0
    if w.objects_per_image is None:
        acc.assume("ota_objects_per_image", objects)
    if w.num_classes is None:
        acc.assume("ota_classes", classes)
    return acc.add(
        "ota_cost_matrices",
        objects * candidates * classes * per,
        "YOLOv7 OTA loss: [objects, candidates, classes] fp32 tensors of one image",
        key="ota_cost_matrices",
        objects=objects,
        candidates=candidates,
        classes=classes,
        bytes_per_element=per,
    )
