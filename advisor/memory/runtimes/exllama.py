"""ExLlamaV2: the cache is allocated for max_seq_len up front, and scratch for one chunk of
max_input_len tokens (fp32 logits over the vocabulary, the widest layer in fp16).
Coefficients and sources: data/runtimes.toml [exllamav2]."""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
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
