"""The guide's table line (chapters 1-3, data/tasks.toml) that agrees with the computed
figure: its VRAM range must hold the per-card figure and its card count the setup's count.
Where no line agrees, the answer quotes none rather than one that contradicts it."""

from __future__ import annotations

from advisor import catalog
from advisor.models.choices import Kind
from advisor.models.result import EstimateResult
from advisor.recommend.headroom import HEADROOM
from advisor.specs import TaskSpec

GB = 1e9
FLOOR_SHARE = 0.75  # the smallest card the figure wants, as a share of the row's floor


def cards_range(task: TaskSpec) -> tuple[int, int]:
    lo, _, hi = task.cards.partition("-")
    return int(lo), int(hi or lo)


def agrees(task: TaskSpec, per_card_bytes: int | None, count: int) -> bool:
    """A line agrees when the figure needs a card in its VRAM class (no more than its top,
    and with the guide's 20% headroom a card of at least 3/4 of its floor: 11 GB of a
    4-bit 14B wants a 16 GB card, not the 20-48 GB row) and the count is one it names."""
    lo_c, hi_c = cards_range(task)
    if not lo_c <= count <= hi_c:
        return False
    if per_card_bytes is None:
        return True  # rendering and the like: the table is all there is
    gb = per_card_bytes / GB
    lo, hi = task.vram_gb
    return lo * FLOOR_SHARE * (1 - HEADROOM) <= gb <= hi


def _same_job(task: TaskSpec, result: EstimateResult) -> bool:
    kind, mode = result.model.kind, result.workload.mode.value
    if task.kind != kind and not (
        task.kind == Kind.rendering and kind in (Kind.video, Kind.simulation)
    ):
        return False
    if task.modes and mode not in task.modes:
        return False
    family = catalog.models().get(result.model.id or "")
    if task.families and (family is None or family.family not in task.families):
        return False
    if family is not None and family.family in task.exclude_families:
        return False
    return task.min_params_b <= result.model.params_b <= task.max_params_b


def guide_task(
    result: EstimateResult, per_card_bytes: int | None = None, count: int = 1
) -> TaskSpec | None:
    """The first line for this kind of job whose range agrees with the figure."""
    if per_card_bytes is None and result.estimate is not None:
        per_card_bytes = result.estimate.total_bytes
    for task in catalog.tasks():
        if _same_job(task, result) and agrees(task, per_card_bytes, count):
            return task
    return None
