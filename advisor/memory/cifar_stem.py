"""The CIFAR ResNet: a 3x3 stride-1 stem with no max-pool, so every stage works at the
input's full side rather than a quarter of it (mmpretrain ResNet_CIFAR). The catalog's
ResNet figures are the ImageNet variant's, scaled by the input area; at CIFAR's 32 px the
CIFAR variant keeps 10-15 times as much (data/classic_activations.toml [cifar_stem])."""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _table() -> dict:
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        return tomllib.load(fh)["cifar_stem"]


def cifar_stem_bytes_per_sample(
    w: Workload, spec: ModelSpec | None, size: tuple[int, int], amp_share: float
) -> float:
    """One training sample's activations as the CIFAR variant at this input (0: the model
    is no ResNet with a CIFAR figure, or the input is larger than CIFAR's)."""
    table = _table()
    if spec is None or spec.family not in table["families"] or not w.mode.is_training:
        return 0.0
    figure = table["bytes_per_sample"].get(spec.id)
    if figure is None or max(size) > table["max_input"]:
        return 0.0
    area = size[0] * size[1] / table["reference_input"] ** 2
    return figure * area * amp_share


def cifar_stem_term(
    acc: Breakdown,
    w: Workload,
    spec: ModelSpec | None,
    size: tuple[int, int],
    batch: int,
    per_sample: float,
    amp_share: float,
) -> int:
    """What the CIFAR stem's full-size stages keep beyond the ImageNet figure the
    activations line already holds, and the assumption that says so."""
    cifar = cifar_stem_bytes_per_sample(w, spec, size, amp_share)
    if cifar <= per_sample:
        return 0
    acc.assume("resnet_stem", "cifar_resnet_stem")
    return acc.add(
        "cifar_stem",
        batch * (cifar - per_sample),
        f"CIFAR ResNet stem: stages at {size[0]}x{size[1]}, {cifar / 1e6:.1f} MB/sample",
        key="cifar_stem",
        batch=batch,
        mb_per_sample=round(cifar / 1e6, 1),
        size=f"{size[0]}x{size[1]}",
    )
