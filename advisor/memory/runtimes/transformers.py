"""transformers `generate()`: weights, a KV cache that grows with the sequence, and the
prefill peak of one decoder layer over the whole prompt (single-shot prefill).

Two generations of the library differ: before 4.36 the cache was a tuple re-concatenated
every decode step (old and new copies coexist) and before 4.45 logits were computed for
every prompt token; `Workload.legacy_generate` selects that behaviour. Coefficients and
their sources: data/runtimes.toml [transformers].
"""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width
from advisor.models import Attention

# Frameworks that pre-allocate a static cache for the model's length when not told.
STATIC_CACHE_FRAMEWORKS = {"torchtune", "gpt-fast", "tensorrt-llm", "trt-llm"}
# Quantized formats whose transformers kernels keep an ExLlama-style scratch buffer.
EXLLAMA_KERNEL_FORMATS = {"gptq-4bit", "gptq-3bit", "gptq-8bit"}


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    w, arch = s.w, s.arch
    legacy = w.legacy_generate
    cache_len = s.context
    if s.framework in STATIC_CACHE_FRAMEWORKS and w.context_tokens is None:
        cache_len = max(s.context, min(arch.max_context_tokens, 8192))
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, cache_len, "transformers") / s.tp
    allocated = add_weights(s, acc)
    kv = per_tok * cache_len * s.batch
    allocated += add_kv(s, acc, per_tok, cache_len, s.batch)
    if s.fmt in EXLLAMA_KERNEL_FORMATS:
        allocated += add_gptq_scratch(s, acc)

    prefill_tokens = s.batch * s.prompt
    if w.max_num_batched_tokens:
        # Chunked prefill (generate's prefill_chunk_size, or a caller feeding the prompt in
        # pieces): one chunk's buffers at a time.
        prefill_tokens = min(prefill_tokens, w.max_num_batched_tokens)
    h, inter = arch.hidden, mlp_width(arch)
    if legacy:
        per_token = (6 * h + 4 * inter / s.tp) * 2
    else:
        per_token = (
            coefficient("transformers", "prefill_hidden_buffers") * h
            + coefficient("transformers", "prefill_mlp_buffers") * inter / s.tp
        ) * 2
    scores = 0.0
    if s.attention == Attention.eager:
        scores = s.batch * arch.heads / s.tp * s.prompt * s.prompt * 6
    logits_tokens = prefill_tokens if legacy else s.batch
    logit_bytes = coefficient("transformers", "legacy_logits_bytes")
    logits = logits_tokens * arch.vocab * logit_bytes / s.tp
    # Layer buffers are freed before the lm_head runs: the prefill peak is one or the other.
    prefill = max(prefill_tokens * per_token + scores, logits)
    # The KV cache grows by the generated tokens after the prefill: what the prefill may
    # use beyond the final cache is its peak minus the cache it has not yet grown.
    grown = per_tok * s.batch * max(cache_len - s.prompt, 0)
    decodes = w.new_tokens is None or w.new_tokens > 1
    concat = kv if legacy and decodes else 0.0
    if concat >= prefill:
        return allocated + acc.add(
            "activations",
            concat,
            "decode step: generate() concatenates the KV cache, old and new copies coexist",
            key="activations.concat_cache",
        )
    extra = prefill if legacy else max(prefill - grown, 0.0)
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return allocated + acc.add("activations", extra, "")
    return allocated + acc.add(
        "activations",
        extra,
        f"prefill of {prefill_tokens} tokens: hidden/MLP buffers of one layer"
        + (" + eager attention scores" if scores else "")
        + f" + logits over {arch.vocab} tokens",
        key="activations.prefill",
        tokens=prefill_tokens,
        kib_per_token=round(per_token / 1024, 1),
        vocab=arch.vocab,
    )


def add_gptq_scratch(s: InferenceSetup, acc: Breakdown) -> int:
    """AutoGPTQ/optimum ExLlama kernels: fp16 scratch of max_input_length x the widest
    layer (at least 2048 tokens, raised to the prompt for long inputs) plus one dequantized
    layer."""
    arch = s.arch
    widest = max(arch.hidden, mlp_width(arch) // s.tp)
    tokens = max(s.batch * s.prompt, coefficient("transformers", "exllama_min_input_tokens"))
    return acc.add(
        "kernel_scratch",
        tokens * widest * 2 + arch.hidden * widest * 2,
        f"GPTQ kernel scratch: {tokens} tokens x {widest} x 2 B + one dequantized layer",
        key="kernel_scratch",
        tokens=tokens,
        width=widest,
    )
