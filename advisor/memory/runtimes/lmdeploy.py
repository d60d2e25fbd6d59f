"""LMDeploy (TurboMind, and its PyTorch engine): the weights, then a KV block pool taken at
start as a share of the memory the weights left free (--cache-max-entry-count, 0.8 since
v0.2.1), whatever the chat's length. The estimate is what the job needs (the weights and
the KV cache of the asked context); `share_bytes` is what nvidia-smi shows on a given card
once the pool is taken. Source and default: data/runtimes.toml [lmdeploy]."""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import CUDA_CONTEXT_BYTES, Breakdown
from advisor.models.estimate import Estimate
from advisor.models.workload import Workload


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    """The weights and the KV blocks the asked context fills: what the pool must hold at
    least (TurboMind's blocks are the cache; no transformers-style prefill copies)."""
    ratio = cache_share(s.w)
    if s.w.cache_max_entry_count is None:
        acc.assume("cache_max_entry_count", ratio)
    allocated = add_weights(s, acc)
    # requests served at once hold their blocks together, as a batch does
    sequences = s.w.concurrency or s.batch
    return allocated + add_kv(s, acc, s.kv_per_token, s.context, sequences)


def cache_share(w: Workload) -> float:
    """--cache-max-entry-count as asked, else LMDeploy's default (0.8 of the free memory)."""
    if w.cache_max_entry_count is not None:
        return w.cache_max_entry_count
    return float(coefficient("lmdeploy", "cache_max_entry_count"))


def share_bytes(est: Estimate, card_bytes: int, ratio: float) -> int:
    """What nvidia-smi shows on a card of `card_bytes` once LMDeploy has started: the CUDA
    context and the weights (what the estimate holds besides its KV cache), plus `ratio` of
    the memory they left free as KV blocks (BlockManager::GetBlockCount). Never less than
    the job's own need (a card too small for it shows its need, not a share)."""
    kv = sum(t.bytes for t in est.terms if t.name == "kv_cache")
    before_pool = max(est.total_bytes - kv, CUDA_CONTEXT_BYTES)
    pool = int(ratio * max(card_bytes - before_pool, 0))
    return max(before_pool + pool, est.total_bytes)
