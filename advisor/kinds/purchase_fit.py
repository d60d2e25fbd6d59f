"""Whether a purchase plan's cards run the job: as the fit answer judges the same card, with
the guide's headroom, a diffusion job's low-VRAM recipe, and FSDP-QLoRA's split over cards."""

from __future__ import annotations

from typing import Any

from advisor.catalog import GpuSpec
from advisor.memory import estimate
from advisor.models.choices import Kind, Mode, Offload, Parallelism
from advisor.models.workload import Workload
from advisor.recommend.headroom import HEADROOM
from advisor.recommend.recipes import rungs, small_card_recipe


def fits(workload: Workload, gpu: GpuSpec, count: int) -> bool:
    """The workload on `count` of the card with the guide's headroom (as /fit judges)."""
    return fit_recipe(workload, gpu, count)[0]


def fit_recipe(workload: Workload, gpu: GpuSpec, count: int) -> tuple[bool, str | None]:
    """Whether the workload runs on `count` of the card with the guide's headroom, and the
    low-VRAM recipe it runs with (None: as asked), as the fit answer judges the same card:
    a diffusion job the user set no knobs for is run with the first full-speed rung of
    data/small_card_recipes.toml that fits (FLUX.1-dev LoRA: an fp8 base, 15.3 GiB, where
    loaded in bf16 it needs 66 GiB). A diffusion pipeline is not split over cards (each
    card holds it whole, data parallel), so several cards fit as one does."""
    diffusion = workload.kind == Kind.diffusion
    count = 1 if diffusion else count
    update: dict[str, Any] = {"num_gpus": count}
    if count > 1 and workload.parallelism is None:
        update["parallelism"] = "fsdp" if workload.mode.is_training else "tp"
    w = workload.model_copy(update=update)
    result = estimate(w)
    est = result.estimate
    if est is None:
        return True, None
    cap = int(gpu.usable_vram_bytes * (1 - HEADROOM))
    if est.total_bytes > cap and _sharded_qlora(w):
        # FSDP-QLoRA's split (Answer.AI fsdp_qlora: 70B on 2x 24 GB): the 4-bit weights
        # sharded over the cards and kept on the CPU, gathered a layer at a time, as the
        # fit answer's "offload_params" change (recommend/fix_candidates.py) sizes it
        split = estimate(w.model_copy(update={"cpu_offload": Offload.params})).estimate
        if split is not None and split.total_bytes <= cap:
            return True, "offload_params"
    if est.total_bytes <= cap or not diffusion:
        return est.total_bytes <= cap, None
    found = small_card_recipe(result, gpu, cap, cap)
    if found is None or any(r.slow for r in rungs(w.mode.is_training) if r.code == found[0]):
        return False, None
    return True, found[0]


def _sharded_qlora(w: Workload) -> bool:
    """A QLoRA run split over several cards by FSDP / ZeRO-3, nothing offloaded yet."""
    return (
        w.tuning == Mode.qlora
        and w.num_gpus > 1
        and w.parallelism in (Parallelism.fsdp, Parallelism.zero3)
        and w.cpu_offload == Offload.none
    )
