"""A job that runs on a card only with the CUDA context of lazy module loading: the
estimate charges the eager context (advisor/memory/terms.py CUDA_CONTEXT_BYTES, the larger
figure keeps old-era setups safe); PyTorch 2.1+ on CUDA 11.7+ loads kernels on first use
and its context is about 0.5 GiB (advisor/data/cuda_context.toml). Where only that smaller
figure fits, the verdict is "tight, only with a recent PyTorch", not "does not fit"."""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, GpuSpec
from advisor.memory import GIB
from advisor.memory.runtimes import LLAMACPP_FAMILY
from advisor.models.choices import Runtime
from advisor.models.estimate import Estimate
from advisor.recommend.headroom import runs_in

_OWN_SHARE = {Runtime.vllm, Runtime.sglang, Runtime.tgi}


@cache
def context_bytes() -> tuple[int, int]:
    """(eager, lazy) CUDA context of a PyTorch process, bytes."""
    with (DATA_DIR / "cuda_context.toml").open("rb") as fh:
        row = tomllib.load(fh)["context"]
    return int(row["eager_gib"] * GIB), int(row["lazy_gib"] * GIB)


def lazy_saving(est: Estimate | None, gpu: GpuSpec) -> int:
    """Bytes per card the lazy context takes off the estimate: 0 off an NVIDIA card (no
    CUDA) or for a runtime outside PyTorch whose own context is charged (llama.cpp and its
    front ends, MLX), nor for a serving engine that takes a share of the card at start
    (vLLM, SGLang, TGI: the context sits inside that share, and the answer's changes are
    their small-card flags)."""
    if est is None or gpu.vendor != "NVIDIA":
        return 0
    if est.runtime is not None and (
        est.runtime in LLAMACPP_FAMILY or est.runtime in _OWN_SHARE or est.runtime == Runtime.mlx
    ):
        return 0
    if not any(t.name == "runtime_overhead" for t in est.terms):
        return 0
    eager, lazy = context_bytes()
    return max(eager - lazy, 0)


def lazy_fit(need: int, usable: int, est: Estimate | None, gpu: GpuSpec) -> int | None:
    """Per card with the lazy context, when the job does not run with the eager one and
    runs with it; else None."""
    if runs_in(need, usable):
        return None
    saving = lazy_saving(est, gpu)
    if saving and runs_in(need - saving, usable):
        return need - saving
    return None
