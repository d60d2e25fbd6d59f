"""Free notebooks (Kaggle, Colab) beside the rentals: offered when the job runs on their card
with the guide's headroom."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.constraints import blockers
from advisor.models.choices import Kind
from advisor.models.result import EstimateResult
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.fixes import cheap_floor
from advisor.recommend.headroom import HEADROOM
from advisor.recommend.pricing import platforms


def free_tiers(result: EstimateResult) -> list[dict[str, str | int]]:
    """Free notebooks (Kaggle, Colab) when the job fits their card with the guide's headroom
    and the card can run it: coursework rarely needs to rent. Their T4 has no bf16, so
    training is judged in fp16 mixed precision (the `fp16` flag tells the template)."""
    est = result.estimate
    w = result.workload
    if est is None or result.model.kind not in (Kind.llm, Kind.classic, Kind.diffusion):
        return []
    if w.num_gpus > 1:
        return []
    out: list[dict[str, str | int]] = []
    # by card: the judgement (None: not offered, else the fp16 flag) is the card's alone, and
    # the free tiers share one (Kaggle's and Colab's T4)
    judged: dict[str, int | None] = {}
    for tier in platforms()["free"]:
        gpu_id = tier["gpu_id"]
        if gpu_id not in judged:
            judged[gpu_id] = free_card(result, catalog.gpus()[gpu_id])
        if (fp16 := judged[gpu_id]) is not None:
            out.append({**tier, "fp16": fp16})
    return out


def free_card(result: EstimateResult, gpu: GpuSpec) -> int | None:
    """Whether a free tier's card runs the job with the guide's headroom: None if not, else
    1 when judged in fp16 mixed precision (a card without bf16), 0 as asked."""
    w = result.workload
    cap = gpu.usable_vram_bytes * (1 - HEADROOM)
    if cheap_floor(result) > cap:
        # The weights and the CUDA context alone are over the cap, as they are after the
        # change to fp16 (a setting of the same run: fixes.cheap_floor): no estimate needed.
        return None
    trial = result
    if w.mode.is_training and not gpu.bf16_supported and w.compute_dtype is None:
        trial = trial_estimate(w.model_copy(update={"compute_dtype": "fp16"}))
    if blockers(gpu, trial) or trial.estimate is None:
        return None
    if trial.estimate.total_bytes <= cap:
        return int(trial is not result)
    return None
