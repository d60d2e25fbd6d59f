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
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, s.context, "exllamav2") / s.tp
    allocated += add_kv(s, acc, per_tok, s.context, s.batch)
    chunk = min(coefficient("exllamav2", "chunk_tokens"), max(s.batch * s.prompt, 1))
    per_token = arch.vocab * 4 + 3 * mlp_width(arch) / s.tp * 2
    return allocated + acc.add(
        "activations",
        chunk * per_token,
        f"one chunk of {chunk} tokens: fp32 logits + widest layer in fp16",
        key="activations.chunk",
        tokens=chunk,
        vocab=arch.vocab,
    )
