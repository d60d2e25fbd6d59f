"""llama.cpp's partial offload (-ngl): how many layers fit a card, found by estimating
the whole job at each count (the runtime's own terms are in `runtimes.llamacpp`)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.choices import Runtime
from advisor.models.workload import Workload


def layers_that_fit(w: Workload, card_bytes: int) -> int:
    """The largest -ngl whose total view fits `card_bytes` (0: not even the compute buffer
    and context fit). The rest of the layers run on the CPU, at its memory bandwidth."""

    def total(layers: int) -> int:
        trial = w.model_copy(update={"n_gpu_layers": layers, "runtime": Runtime.llamacpp})
        est = estimate(trial).estimate
        return est.total_bytes if est else 0

    arch = estimate(w.model_copy(update={"runtime": Runtime.llamacpp})).model.arch
    top = arch.layers if arch else 0
    lo, hi = 0, top
    if total(0) > card_bytes:
        return 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if total(mid) <= card_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo
