"""`advisor.memory.estimate`, memoized by workload (advisor.memo).

Why: a recommendation judges one job on every card, and memory per card does not depend on
which card: the fixes tried per card (a smaller format, a shorter context, LoRA…) are the
same few changed workloads for all of them, and the same questions come back. The engine's
own function stays the one place the arithmetic lives; this only remembers its answers.
"""

from __future__ import annotations

from advisor import memory
from advisor.catalog import catalog_version
from advisor.memo import Memo
from advisor.models import EstimateResult, Workload

# ~17 kB an entry (tracemalloc); a recommendation makes ~24: 1024 hold about 40 questions'.
_ESTIMATES: Memo[EstimateResult] = Memo("estimate", 1024)


def estimate(w: Workload) -> EstimateResult:
    """The shared result: change it only through `model_copy`."""
    return _ESTIMATES.get((catalog_version(), w.model_dump_json()), lambda: memory.estimate(w))
