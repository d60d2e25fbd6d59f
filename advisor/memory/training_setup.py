"""What every term of a training estimate starts from (`TrainingSetup`): built by
`training_recipe`, read by `training`, `training_activations` and the sharding stacks' terms
(`sharding`), so the training modules and `sharding` need not import each other for it."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.catalog import ModelSpec
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Optimizer, Parallelism
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload


@dataclass
class TrainingSetup:
    """What every term of a training estimate starts from: the recipe, resolved once."""

    w: Workload
    model: ResolvedModel
    spec: ModelSpec | None
    arch: Architecture
    params: float
    fmt: str
    par: Parallelism
    split: int  # cards the weights are split over
    attention: Attention
    framework: str | None
    batch: int
    seq: int
    opt: Optimizer
    gc: bool
    compute: str
    full: bool
    elem: float  # bytes per saved activation value
    trainable: float
    param_bytes: int  # storage bytes of a trained parameter (and its gradient)
    master: bool  # fp32 master weights beside 16-bit ones
    shard_states: int
    shard_grads: int
    tp: int
    layers: int  # layers on this card (pipeline stage)
    pp: int = 1  # pipeline stages = micro-batches (torchtitan's default count)
    # a speech model's decoder label tokens a sample (0: the loss runs over every position)
    labels: int = 0
    # keys an eager score matrix holds a position (0: the sequence length)
    attention_keys: int = 0

    @property
    def tokens(self) -> int:
        return self.batch * self.seq

    @property
    def loss_positions(self) -> int:
        """Positions the loss's logits cover: a speech model's label tokens only."""
        return self.batch * self.labels if self.labels else self.tokens
