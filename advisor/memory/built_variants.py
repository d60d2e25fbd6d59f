"""Where the network a stack builds keeps more than the torchvision model its catalog figure
was measured on: the CIFAR ResNet's full-size stages (cifar_stem.py) and OpenMMLab's Swish in
EfficientNet (mmcv_swish.py), each a breakdown line beside the activations."""

from __future__ import annotations

from advisor.catalog import ModelSpec
from advisor.memory.cifar_stem import cifar_stem_term
from advisor.memory.mmcv_swish import mmcv_swish_term
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


def built_variant_terms(
    acc: Breakdown,
    w: Workload,
    spec: ModelSpec | None,
    size: tuple[int, int],
    batch: int,
    per_sample: float,
    amp_share: float,
) -> int:
    """The lines a stack's own build of the network adds to the measured activations."""
    added = cifar_stem_term(acc, w, spec, size, batch, per_sample, amp_share)
    return added + mmcv_swish_term(acc, w, spec, batch, per_sample)
