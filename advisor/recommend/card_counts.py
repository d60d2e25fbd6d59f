"""On how many cards a job is tried, and the same work spread over another count."""

from __future__ import annotations

from advisor.models.choices import Parallelism
from advisor.models.workload import Workload

# Card counts tried, fewest first: any count on one machine (ZeRO-3 / FSDP, data parallel,
# llama.cpp's and pipeline layer splits take 3 or 6 cards as well as 4; vLLM/SGLang tensor
# parallelism only where the count divides the attention heads, `tp_ok`), then whole 8-card
# machines. A ladder of 1/2/4/8 answered "at least 4" for a DPO full fine-tune its own
# estimate ran on 3 A100 80GB with 33% free.
COUNTS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 32)
# The most cards of one machine (an 8-GPU node): more is a multi-node cluster.
ONE_MACHINE = 8


def adds_cards(code: str) -> bool:
    """A change that runs the job on more cards ("cards:4", or "stack:cards:2+…": fewer
    more cards with settings of the same run)."""
    return code.startswith(("cards:", "stack:cards:"))


def workload_for(w: Workload, count: int) -> Workload:
    """The same work on `count` cards: ZeRO-3 for training; for inference the engine's
    split for the runtime (tensor parallel, llama.cpp's layer split), unless the user named
    a split."""
    if count == w.num_gpus:
        return w
    par = w.parallelism
    if count > 1 and par in (None, Parallelism.none):
        par = Parallelism.zero3 if w.mode.is_training else None
    return w.model_copy(
        update={"num_gpus": count, "parallelism": par if count > 1 else Parallelism.none},
    )
