"""llama.cpp (and Ollama, LM Studio): the buffers llama.cpp prints at load.

* model buffer: the weights of the layers offloaded with -ngl (the token-embedding matrix
  stays in host memory; the output matrix, a duplicate of it for a tied model, goes with the
  last layer); `--n-cpu-moe N` keeps the MoE experts of N layers on the host;
* context buffer: the KV cache for n_ctx tokens (f16 unless -ctk/-ctv say otherwise),
  for the offloaded layers;
* several cards: `--split-mode layer` (the default; Ollama and LM Studio split the same
  way) puts whole layers, with their KV, on each card, and each card keeps its own compute
  buffer and CUDA context (llama.cpp README, "--split-mode"; Ollama docs/faq.md);
* compute buffer: one n_ubatch micro-batch's graph: fp32 logits and the widest fp32
  intermediates; without flash attention also the n_ctx x n_ubatch score matrix.

Coefficients and sources: data/runtimes.toml [llamacpp].
"""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import embedding_params, kv_bytes_per_token, mlp_width
from advisor.models.choices import Attention


def expert_params_per_layer(s: InferenceSetup) -> float:
    arch = s.arch
    if not (arch.experts and arch.moe_intermediate):
        return 0.0
    return arch.experts * (3 if arch.gated_mlp else 2) * arch.hidden * arch.moe_intermediate


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    w, arch = s.w, s.arch
    params = s.model.params_b * 1e9
    bytes_per_param = s.weight_bytes / params
    layers_on_gpu = arch.layers if w.n_gpu_layers is None else min(w.n_gpu_layers, arch.layers)
    host_embedding = arch.vocab * arch.hidden  # tok_embd is never offloaded
    per_layer = (params - embedding_params(arch)) / arch.layers
    # The output matrix sits on the card with the last layer. A model whose output shares
    # tok_embd (tied: Gemma, Qwen2.5 <= 3B, Llama 3.2) gets a copy of it there: its loader
    # creates `output` from tok_embd with TENSOR_DUPLICATED, "duplicated to allow
    # offloading" (llama.cpp src/llama-model.cpp, read 2026-12-07), so the card holds the
    # vocab x hidden matrix whether or not it is tied (data/runtimes.toml [llamacpp]).
    output = embedding_params(arch) - host_embedding
    if arch.tied_embeddings:
        output = host_embedding if coefficient("llamacpp", "tied_output_duplicated") else 0
    on_gpu = per_layer * layers_on_gpu
    if w.n_cpu_moe:
        on_gpu -= expert_params_per_layer(s) * min(w.n_cpu_moe, layers_on_gpu)
    # Several cards (--split-mode layer, the default): each holds its share of the layers
    # and their KV; the output matrix sits whole on the last card, counted on every card
    # (the fullest one is the one that runs out).
    cards = s.split
    on_card = max(on_gpu, 0) / cards + (output if layers_on_gpu == arch.layers else 0)
    # The card holds fewer parameters than the model has (tok_embd stays on the host; a layer
    # split gives each card its share): the line counts those, or "14.77B params x 8.5 bits
    # (q8_0) = 13.84 GiB" read as arithmetic that does not hold (14.77 x 8.5 / 8 = 14.6).
    allocated = acc.add(
        "weights",
        on_card * bytes_per_param,
        f"{on_card / 1e9:.2f}B params on the card x {bytes_per_param * 8:.3g} bits ({s.fmt})",
        key="weights.llamacpp",
        params_b=round(on_card / 1e9, 2),
        host_b=round(host_embedding / 1e9, 2),
        bits=round(bytes_per_param * 8, 2),
        format=s.fmt,
        cards=cards,
    )
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, s.context, "llamacpp") / cards
    per_tok *= layers_on_gpu / arch.layers
    allocated += add_kv(s, acc, per_tok, s.context, s.batch, cards=cards)
    allocated += add_compute_buffer(s, acc)
    return allocated


def add_compute_buffer(s: InferenceSetup, acc: Breakdown) -> int:
    arch = s.arch
    ubatch = s.w.n_ubatch or coefficient("llamacpp", "n_ubatch")
    elem = coefficient("llamacpp", "compute_bytes_per_value")
    width = (
        arch.vocab
        + coefficient("llamacpp", "compute_hidden_buffers") * arch.hidden
        + coefficient("llamacpp", "compute_mlp_buffers") * mlp_width(arch)
    )
    scores = 0.0
    if s.attention == Attention.eager:  # no flash attention: KQ for n_ctx x n_ubatch
        scores = arch.heads * s.context * ubatch * elem
    return acc.add(
        "compute_buffer",
        ubatch * width * elem + scores,
        f"n_ubatch {ubatch} x ({arch.vocab} logits + layer intermediates) x fp32"
        + (" + attention scores (no flash attention)" if scores else ""),
        key="compute_buffer",
        ubatch=ubatch,
        vocab=arch.vocab,
    )


# Terms llama.cpp's memory breakdown prints (model + context + compute).
BUFFER_TERMS = {"weights", "kv_cache", "compute_buffer"}


def context_bytes() -> int:
    """The CUDA/HIP context and handles a llama.cpp process holds on each card, beside its
    buffers (data/runtimes.toml [llamacpp] context_mib); ggml allocates its buffers at
    their reserved size, so no caching-allocator slack is added to it."""
    return int(coefficient("llamacpp", "context_mib")) * 2**20
