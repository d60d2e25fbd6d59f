"""ExLlamaV2: the cache is allocated for max_seq_len up front, and scratch for one chunk of
max_input_len tokens (fp32 logits over the vocabulary, the widest layer in fp16).
ExLlama v1: the same preallocated cache, the embeddings on the CPU, kernel buffers sized for
max_seq_len, and the whole prompt in one pass with materialised attention scores.
Coefficients and sources: data/runtimes.toml [exllamav2], [exllama_v1]."""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    if s.framework in coefficient("exllama_v1", "frameworks"):
        return allocate_v1(s, acc)
    arch = s.arch
    allocated = add_weights(s, acc)
    # The cache is sized for max_seq_len; TabbyAPI, text-generation-webui and exui let the
    # user set it, and people size it to the context they use: the asked context, else the
    # engine's default 4k (stated). Pre-allocating the model's maximum (131072 for
    # Llama 3.1) is what nobody runs on a consumer card.
    cache_len = s.context
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, cache_len, "exllamav2") / s.tp
    allocated += add_kv(s, acc, per_tok, cache_len, s.batch)
    chunk = min(coefficient("exllamav2", "chunk_tokens"), max(s.batch * s.prompt, 1))
    per_token = arch.vocab * 4 + 3 * mlp_width(arch) / s.tp * 2
    # Without flash-attn the scores of a chunk against the whole cache are materialized,
    # the chunk shrunk so chunk x context stays under max_attention_size per head.
    scores = (
        arch.heads
        / s.tp
        * min(chunk * cache_len, coefficient("exllamav2", "max_attention_size"))
        * 2
    )
    return allocated + acc.add(
        "activations",
        chunk * per_token + scores,
        f"one chunk of {chunk} tokens: fp32 logits + widest layer in fp16 + attention scores",
        key="activations.chunk",
        tokens=chunk,
        vocab=arch.vocab,
    )


def allocate_v1(s: InferenceSetup, acc: Breakdown) -> int:
    """ExLlama v1 (data/runtimes.toml [exllama_v1]): weights without the token embeddings
    (kept on the CPU), an fp16 cache for the whole context, temp_state (context x MLP width)
    and temp_dq (the widest layer dequantized), and a prefill of the whole prompt whose
    attention scores and softmax are materialised (PyTorch SDPA with an explicit mask)."""
    arch = s.arch
    inter = mlp_width(arch) // s.tp
    embeddings = arch.vocab * arch.hidden * 2  # fp16, on the CPU (ExLlamaDeviceMap)
    allocated = add_weights(s, acc, s.weight_bytes - embeddings)
    ctx = s.context
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, ctx, "exllamav2") / s.tp
    allocated += add_kv(s, acc, per_tok, ctx, s.batch)
    scratch = ctx * inter * 2 + arch.hidden * inter * 2
    allocated += acc.add(
        "kernel_scratch",
        scratch,
        f"ExLlama temp_state {ctx} tokens x {inter} x 2 B + one dequantized layer",
        key="kernel_scratch",
        tokens=ctx,
        width=inter,
    )
    q_len = s.prompt
    keys = min(s.prompt, ctx) if s.prompt else ctx
    attention = 0.0
    if q_len >= coefficient("exllama_v1", "sdp_thd"):
        heads = arch.heads / s.tp
        attention = (
            s.batch
            * q_len
            * keys
            * (
                heads * coefficient("exllama_v1", "score_bytes")
                + coefficient("exllama_v1", "mask_bytes")
            )
        )
    mlp = s.batch * q_len * inter * 2 * coefficient("exllama_v1", "mlp_buffers")
    logits = s.batch * arch.vocab * 4  # last token only (last_id_only)
    return allocated + acc.add(
        "activations",
        attention + mlp + logits,
        f"whole prompt of {q_len} tokens in one pass: fp16 scores + softmax over {keys} keys x"
        f" {arch.heads} heads, the fp16 mask, MLP outputs",
        key="activations.exllama_v1",
        tokens=q_len,
        keys=keys,
        heads=arch.heads,
    )
