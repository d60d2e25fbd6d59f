"""EfficientNet as OpenMMLab builds it: its activations are mmcv's Swish, `x *
torch.sigmoid(x)`, which keeps the sigmoid's output for backward beside the input that
torch's SiLU alone keeps (data/classic_activations.toml [mmcv_swish]). The catalog's
EfficientNet figures are torchvision's (SiLU)."""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _table() -> dict:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        return tomllib.load(fh)["mmcv_swish"]


def mmcv_swish_ratio(w: Workload, spec: ModelSpec | None) -> float:
    """Saved bytes under mmcv's Swish over SiLU's for this model and stack (1.0: none)."""
    table = _table()
    if spec is None or not w.mode.is_training or spec.family not in table["families"]:
        return 1.0
    if (w.framework or "").lower() not in table["frameworks"]:
        return 1.0
    return float(table["saved_ratio"].get(spec.id, 1.0))


def mmcv_swish_term(
    acc: Breakdown, w: Workload, spec: ModelSpec | None, batch: int, per_sample: float
) -> int:
    """What the Swish's kept sigmoid outputs add to the activations line."""
    ratio = mmcv_swish_ratio(w, spec)
    if ratio <= 1.0:
        return 0
    return acc.add(
        "mmcv_swish",
        batch * per_sample * (ratio - 1),
        f"mmcv Swish keeps sigmoid(x) too: activations x {ratio - 1:.3f}",
        key="mmcv_swish",
        share=round(ratio - 1, 3),
    )
