"""AutoAWQ with fused layers: its own static fp16 KV cache per layer, eager attention in
the prefill, and a load peak where the fused qkv projections are built beside the
original q/k/v. Coefficients and sources: data/runtimes.toml [autoawq]."""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width

# The `framework` words that name AutoAWQ (the stack that runs the AWQ model itself).
FRAMEWORKS = {"autoawq"}


def cache_tokens(s: InferenceSetup) -> int:
    """The fused cache's max_seq_len: from_quantized's max_new_tokens (the tokens to
    decode; the whole context when not given), doubled while a prompt is longer."""
    tokens = s.w.new_tokens or s.context
    while tokens < s.prompt:
        tokens *= 2
    return tokens


def qkv_bytes(s: InferenceSetup) -> float:
    """Bytes of every layer's quantized q, k and v projections (per card)."""
    arch = s.arch
    out = (arch.heads + 2 * arch.kv_heads_) * arch.head_dim_
    return arch.layers * arch.hidden * out * s.weight_bits / 8 / s.split


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    arch = s.arch
    cache_dtype = coefficient("autoawq", "cache_dtype")
    cache_len = cache_tokens(s)
    per_tok = kv_bytes_per_token(arch, cache_dtype, cache_len, "autoawq") / s.tp
    weights = add_weights(s, acc)
    kv = add_kv(s, acc, per_tok, cache_len, s.batch)
    tokens = s.batch * s.prompt
    h, inter = arch.hidden, mlp_width(arch)
    per_token = (
        coefficient("transformers", "prefill_hidden_buffers") * h
        + coefficient("transformers", "prefill_mlp_buffers") * inter / s.tp
    ) * 2
    scores = (
        s.batch * arch.heads / s.tp * s.prompt * s.prompt * coefficient("autoawq", "scores_bytes")
    )
    # The fused model returns logits for every prompt token (fp16, upcast to fp32 by the
    # transformers head of that era); the layer buffers are freed before the head runs.
    logits = tokens * arch.vocab * coefficient("transformers", "legacy_logits_bytes") / s.tp
    prefill = max(tokens * per_token + scores, logits)
    load_copy = qkv_bytes(s)
    if load_copy > prefill:
        return (
            weights
            + kv
            + acc.add(
                "fused_qkv",
                load_copy,
                f"fused qkv built beside the original q/k/v at load: {arch.layers} layers",
                key="fused_qkv",
                layers=arch.layers,
            )
        )
    return (
        weights
        + kv
        + acc.add(
            "activations",
            prefill,
            f"prefill of {tokens} tokens: hidden/MLP buffers of one layer + eager attention "
            f"scores (fp16 + fp32 softmax) + logits over {arch.vocab} tokens",
            key="activations.prefill",
            tokens=tokens,
            kib_per_token=round(per_token / 1024, 1),
            vocab=arch.vocab,
        )
    )
