"""vLLM and SGLang: memory as the engine accounts for it at start-up.

vLLM loads the weights, runs a profile forward of `max_num_batched_tokens` tokens (and a
sampler pass over `max_num_seqs` rows) to find the activation peak, adds the non-torch
memory (cuBLAS, NCCL and custom all-reduce buffers with TP > 1), then gives the KV cache
whatever `gpu_memory_utilization` x the card leaves, and captures CUDA graphs. Its log
line "Total non KV cache memory" = weights + activation peak + non-torch. We list those
terms, the KV cache the user's context x concurrency needs, and the CUDA-graph pool; the
card must hold their sum, and nvidia-smi will show gpu_memory_utilization x the card.
Coefficients and sources: data/runtimes.toml [vllm], [sglang].
"""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import GIB, Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width
from advisor.models.choices import Runtime
from advisor.models.estimate import Estimate, ServingFit


def engine_key(s: InferenceSetup) -> str:
    return "sglang" if s.runtime == Runtime.sglang else "vllm"


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    w, arch = s.w, s.arch
    key = engine_key(s)
    batched = w.max_num_batched_tokens or coefficient(key, "max_num_batched_tokens")
    max_seqs = w.max_num_seqs or coefficient(key, "max_num_seqs")
    if w.max_num_batched_tokens is None:
        acc.assume("max_num_batched_tokens", batched)
    allocated = add_weights(s, acc)
    allocated += add_profile_activations(s, acc, batched, max_seqs)
    allocated += add_non_torch(s, acc)
    sequences = w.concurrency or s.batch
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, s.context, "vllm") / s.tp
    allocated += add_kv(s, acc, per_tok, s.context, sequences)
    if w.cuda_graphs is not False:
        allocated += acc.add(
            "cuda_graphs",
            coefficient("vllm", "cuda_graph_gib") * GIB,
            "CUDA graph pool captured after the profile",
            key="cuda_graphs",
            gib=coefficient("vllm", "cuda_graph_gib"),
        )
    return allocated


def add_profile_activations(s: InferenceSetup, acc: Breakdown, batched: int, max_seqs: int) -> int:
    """Torch peak of the profile run: one layer's buffers for `batched` tokens, or the
    sampler's buffers for `max_seqs` rows x vocab beside the forward's output hidden states,
    whichever is larger (the sampler runs after the forward has freed its layer buffers;
    profile_run keeps the hidden states across _dummy_sampler_run). Builds that sort the
    vocabulary for top-k/top-p (`Workload.vllm_sort_sampler`) hold the sort's buffers."""
    arch = s.arch
    elem = 4 if s.fmt == "fp32" else 2
    per_token = (
        coefficient("vllm", "profile_hidden_buffers") * arch.hidden
        + coefficient("vllm", "profile_mlp_buffers") * mlp_width(arch) / s.tp
    ) * elem
    forward = batched * per_token
    sort = s.w.vllm_sort_sampler
    fp32_bytes = coefficient(
        "vllm", "sort_sampler_fp32_bytes_per_logit" if sort else "sampler_fp32_bytes_per_logit"
    )
    # Logits already in fp32 are their own fp32 copy.
    per_logit = elem + fp32_bytes - (4 if elem == 4 else 0)
    sampler = max_seqs * arch.vocab * per_logit + batched * arch.hidden * elem
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("activations", max(forward, sampler), "")
    what = "top-k/top-p sort" if sort else "fp32 logits, probs and noise"
    return acc.add(
        "activations",
        max(forward, sampler),
        f"profile run: the larger of {batched} tokens x {per_token / 1024:.0f} KiB and the "
        f"sampler's {what} over {max_seqs} x {arch.vocab} vocab logits",
        key="activations.profile_sort_sampler" if sort else "activations.profile",
        tokens=batched,
        kib_per_token=round(per_token / 1024, 1),
        seqs=max_seqs,
        vocab=arch.vocab,
    )


def add_non_torch(s: InferenceSetup, acc: Breakdown) -> int:
    key = "non_torch_gib_single"
    if s.tp > 1:
        key = (
            "non_torch_gib_tp_no_custom_all_reduce"
            if s.w.custom_all_reduce is False
            else "non_torch_gib_tensor_parallel"
        )
    gib = coefficient("vllm", key)
    return acc.add(
        "non_torch",
        gib * GIB,
        "cuBLAS workspaces"
        + (f" + NCCL / custom all-reduce buffers (TP {s.tp})" if s.tp > 1 else ""),
        key="non_torch.tp" if s.tp > 1 else "non_torch",
        gib=gib,
        cards=s.tp,
    )


# Terms that vLLM's own "Total non KV cache memory" line counts.
PROFILE_TERMS = {"weights", "activations", "non_torch"}


def serving_fit(
    est: Estimate, context_tokens: int, card_bytes: int, utilization: float | None = None
) -> ServingFit:
    """What a card leaves for the KV cache once vLLM has taken its share: the engine
    allocates `gpu_memory_utilization` x the card up front (so nvidia-smi shows that, not
    the model's need), subtracts everything that is not KV cache, and pages the rest into
    KV blocks. The largest context and concurrency follow from the KV bytes per token."""
    runtime = "sglang" if est.runtime == Runtime.sglang else "vllm"
    util = utilization or coefficient(runtime, "gpu_memory_utilization")
    non_kv = sum(t.bytes for t in est.terms if t.name in PROFILE_TERMS | {"cuda_graphs"})
    budget = max(int(card_bytes * util) - non_kv, 0)
    per_token = max(est.kv_bytes_per_token or 1, 1)
    tokens = budget // per_token
    return ServingFit(
        gpu_memory_utilization=util,
        nvidia_smi_bytes=int(card_bytes * util),
        non_kv_bytes=non_kv,
        kv_budget_bytes=budget,
        max_context_tokens=int(tokens),
        max_concurrency=int(tokens // max(context_tokens, 1)),
    )
