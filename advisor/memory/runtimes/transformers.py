"""transformers `generate()`: weights, a KV cache that grows with the sequence, and the
prefill peak of one decoder layer over the whole prompt (single-shot prefill).

Two generations of the library differ: before 4.36 the cache was a tuple re-concatenated
every decode step (old and new copies coexist) and before 4.45 logits were computed for
every prompt token; `Workload.legacy_generate` selects that behaviour. Coefficients and
their sources: data/runtimes.toml [transformers].
"""

from __future__ import annotations

from advisor.memory.kv_types import transformers_quantized_cache
from advisor.memory.quantizers import (
    dequant_bytes,
    dequant_rule,
    int8_matmul_bytes_per_token,
    quantizes_lm_head,
)
from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient, from_scratch
from advisor.memory.runtimes.stacked_cache import reserve_bytes
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width
from advisor.models.choices import Attention, Runtime
from advisor.models.workload import Workload

# Frameworks that pre-allocate a static cache for the model's length when not told.
STATIC_CACHE_FRAMEWORKS = {"torchtune", "gpt-fast", "tensorrt-llm", "trt-llm"}
# Quantized formats whose transformers kernels keep an ExLlama-style scratch buffer.
EXLLAMA_KERNEL_FORMATS = {"gptq-4bit", "gptq-3bit", "gptq-8bit"}


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def release(w: Workload, family: str | None = None) -> tuple[int, ...] | None:
    """The transformers release the estimate follows: the one named, else the one the
    model family's own config.json and measurements name (data/runtimes.toml [transformers]
    family_release), else None (a current release)."""
    if w.transformers_version is not None:
        return _release(w.transformers_version)[:2]
    named = coefficient("transformers", "family_release").get(family or "")
    return _release(named) if named else None


def generation(w: Workload, family: str | None = None) -> tuple[bool, bool]:
    """(the cache is re-concatenated each step, logits over the whole prompt) for the
    transformers release (`release`; data/runtimes.toml [transformers] *_since): both
    before 4.36, full-prompt logits alone from 4.36 to 4.44, neither since 4.45, later for
    a family whose forward ignored num_logits_to_keep (family_last_token_logits_since);
    `legacy_generate` says both; a plain forward has full-prompt logits and a tuple cache
    is re-concatenated at any release."""
    if w.legacy_generate:
        return True, True
    v = release(w, family)
    since = coefficient("transformers", "family_last_token_logits_since").get(family or "")
    old_cache = v is not None and v < _release(coefficient("transformers", "dynamic_cache_since"))
    last_token = _release(since or coefficient("transformers", "last_token_logits_since"))
    # a plain forward computes every position's logits whatever the release, and a cache
    # handed over as tuples is re-concatenated beside the caller's (Workload.plain_forward,
    # tuple_cache)
    return w.tuple_cache or old_cache, w.plain_forward or (v is not None and v < last_token)


def full_logits_bytes(w: Workload, family: str | None = None) -> float:
    """Bytes per vocabulary entry and prompt token of full-prompt logits: 16-bit logits
    and their fp32 upcast before 4.46, the 16-bit logits alone since
    (data/runtimes.toml [transformers] logits_upcast_until)."""
    v = release(w, family)
    if w.legacy_generate:
        return float(coefficient("transformers", "legacy_logits_bytes"))
    if v is not None and v < _release(coefficient("transformers", "logits_upcast_until")):
        return float(coefficient("transformers", "legacy_logits_bytes"))
    return float(coefficient("transformers", "full_logits_16bit_bytes"))


def eager_by_default(w: Workload, runtime: Runtime) -> bool:
    """Attention unnamed under a transformers release before the SDPA default
    (data/runtimes.toml [transformers] sdpa_default_since): the eager path, which
    materialises every score matrix."""
    if runtime != Runtime.transformers:
        return False
    if (w.framework or "").lower() in coefficient("transformers", "sdpa_frameworks"):
        return False  # a program that sets SDPA / BetterTransformer itself
    if w.transformers_version is not None:
        since = _release(coefficient("transformers", "sdpa_default_since"))
        return _release(w.transformers_version)[:2] < since
    return bool(w.legacy_generate)


def eager_score_bytes(dtype: str) -> float:
    """Bytes a score takes at the eager softmax's peak: the scores in the model dtype, the
    fp32 softmax and the copy back; ATen converts a bf16 input to fp32 first (its fused
    half-to-float kernel takes fp16 only), an fp32 model keeps one fp32 result."""
    return float(coefficient("transformers", f"eager_score_bytes_{dtype}"))


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    """transformers' generate(): the weights, the cache (static caches whole up front), the
    quantization kernels' buffers, and the generation's activations peak
    (`_add_generation_peak`)."""
    if from_scratch.handles(s.framework):
        return from_scratch.allocate(s, acc)
    w, arch = s.w, s.arch
    _say_release(s, acc)
    cache_len = s.context
    if s.framework in STATIC_CACHE_FRAMEWORKS and w.context_tokens is None:
        cache_len = max(s.context, min(arch.max_context_tokens, 8192))
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, cache_len, "transformers") / s.tp
    allocated = add_weights(s, acc)
    allocated += add_kv(s, acc, per_tok, cache_len, s.batch)
    allocated += add_quantized_cache_copies(s, acc, cache_len)
    if s.fmt in EXLLAMA_KERNEL_FORMATS:
        allocated += add_gptq_scratch(s, acc)
    allocated += add_dequant_buffer(s, acc)
    allocated += add_int8_matmul_buffer(s, acc)
    return allocated + _add_generation_peak(s, acc, per_tok, cache_len)


def _family(s: InferenceSetup) -> str | None:
    return s.spec.family if s.spec is not None else None


def _say_release(s: InferenceSetup, acc: Breakdown) -> None:
    """A release taken from the model family's own config.json, said as assumed, with the
    first release that keeps only the last token's logits (`release`); a plain forward and
    a tuple cache said as the program runs them."""
    if s.w.plain_forward:
        acc.assume("plain_forward", f"{s.w.plain_forward}")
    if s.w.tuple_cache:
        acc.assume("tuple_cache", f"{s.w.tuple_cache}")
    named = coefficient("transformers", "family_release").get(_family(s) or "")
    if named and s.w.transformers_version is None and not s.w.legacy_generate:
        since = coefficient("transformers", "family_last_token_logits_since")[_family(s)]
        acc.assume("transformers_release", named)
        acc.assume("last_token_logits_since", since)


def _prefill_buffers(
    s: InferenceSetup, legacy: bool, full_logits: bool
) -> tuple[float, int, float, float, int]:
    """The prefill's largest buffer: one layer's hidden and MLP buffers, eager attention's
    scores, or the logits (each freed before the next runs). (peak, prefill tokens, bytes
    a token of hidden/MLP buffers, the scores' bytes, the tokens given logits)."""
    w, arch = s.w, s.arch
    prefill_tokens = s.batch * s.prompt
    if w.max_num_batched_tokens:
        # Chunked prefill (generate's prefill_chunk_size, or a caller feeding the prompt in
        # pieces): one chunk's buffers at a time.
        prefill_tokens = min(prefill_tokens, w.max_num_batched_tokens)
    h, inter = arch.hidden, mlp_width(arch)
    # hidden states in the load dtype: 2 B, or 4 B for a model loaded in float32
    elem = s.act_bytes
    if legacy:
        per_token = (6 * h + 4 * inter / s.tp) * elem
    else:
        mlp_key = "prefill_mlp_buffers_fused" if arch.fused_gate_up else "prefill_mlp_buffers"
        per_token = (
            coefficient("transformers", "prefill_hidden_buffers") * h
            + coefficient("transformers", mlp_key) * inter / s.tp
        ) * elem
    scores = 0.0
    if s.attention == Attention.eager:
        # `softmax(scores, dtype=float32).to(query.dtype)` over every score, beside the
        # residual, the normed input and the queries (the keys and values are the cache)
        # and the [batch, 1, prompt, prompt] mask (data/runtimes.toml [transformers]).
        pairs = s.batch * s.prompt * s.prompt
        scores = pairs * arch.heads / s.tp * eager_score_bytes(s.load_dtype) + pairs * elem
        scores += prefill_tokens * coefficient("transformers", "prefill_hidden_buffers") * h * elem
    # over the decoder's positions only: an encoder's input frames get none (Whisper)
    decoder_tokens = s.batch * (s.prompt - s.encoder_tokens)
    logits_tokens = min(prefill_tokens, decoder_tokens) if full_logits else s.batch
    logits = logits_tokens * arch.vocab * full_logits_bytes(w, _family(s)) / s.tp
    # The attention's, the MLP's and the lm_head's buffers are each freed before the next
    # runs: the prefill peak is the largest.
    prefill = max(prefill_tokens * per_token, scores, logits)
    return prefill, prefill_tokens, per_token, scores, logits_tokens


def _add_generation_peak(s: InferenceSetup, acc: Breakdown, per_tok: float, cache_len: int) -> int:
    """The activations term: the larger of what the prefill uses beyond the cache it has not
    yet grown (`_prefill_buffers`) and what the first or a later decode step holds beside
    the cache (the prompt's fp32 logits, a re-concatenated cache's second copy)."""
    w, arch = s.w, s.arch
    legacy, full_logits = generation(w, _family(s))
    prefill, prefill_tokens, per_token, scores, logits_tokens = _prefill_buffers(
        s, legacy, full_logits
    )
    kv = per_tok * cache_len * s.batch
    # A dynamic cache grows by the generated tokens after the prefill: what the prefill may
    # use beyond the final cache is its peak minus the cache it has not yet grown. A static
    # cache (StaticCache.__init__ allocates max_cache_len for every layer, transformers
    # cache_utils.py) is whole before the prefill: nothing to subtract.
    preallocated = w.static_cache or s.framework in STATIC_CACHE_FRAMEWORKS
    grown = 0.0 if preallocated else per_tok * s.batch * max(cache_len - s.prompt, 0)
    decodes = w.new_tokens is None or w.new_tokens > 1
    # Until generate() dropped the prefill's outputs before the next step (`del outputs`,
    # with last-token logits), the prompt's fp32 logits live through the first decode step.
    # Past the final cache: the first step holds them beside its cache (two copies of the
    # prompt's when re-concatenated), a later legacy step two copies of the whole cache.
    held_bytes = min(4.0, full_logits_bytes(w, _family(s)))
    held = logits_tokens * arch.vocab * held_bytes / s.tp if full_logits and decodes else 0.0
    # Only the self-attention cache is re-concatenated: an encoder-decoder model's
    # cross-attention keys and values (Whisper's audio frames) are computed at the first
    # step and reused as they are (WhisperAttention: past_key_value[0:2] taken whole when
    # is_cross_attention; data/runtimes.toml [transformers] cross_attention_cache_source).
    concat = kv - per_tok * s.batch * s.encoder_tokens
    first = held - grown + (concat - grown if legacy else 0.0) if decodes else 0.0
    last = concat if legacy and decodes else 0.0
    extra = prefill if legacy else max(prefill - grown, 0.0)
    if max(first, last) > extra:
        key = "activations.concat_cache"
        if first > last:
            key = "activations.first_decode_concat" if legacy else "activations.first_decode"
            if w.plain_forward or w.tuple_cache:  # the caller's own loop holds them
                key += "_loop"
        return acc.add(
            "activations",
            max(first, last),
            "decode step: generate() concatenates the KV cache, old and new copies coexist"
            if key == "activations.concat_cache"
            else "first decode step: the prompt's logits held beside the cache",
            key=key,
        )
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("activations", extra, "")
    return acc.add(
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


def add_quantized_cache_copies(s: InferenceSetup, acc: Breakdown, cache_len: int) -> int:
    """transformers' QuantizedCache (int8 / int4 / int2, HQQ or quanto): each decode step
    dequantizes one layer's whole cache and concatenates it with the residual and the new
    token, two copies of that layer's keys and values in the model dtype, and every layer
    keeps up to residual_length tokens in the model dtype before quantizing them
    (data/kv_cache.toml [transformers] quantized_*, cache_utils.py QuantizedLayer.update)."""
    q = transformers_quantized_cache(s.kv_dtype)
    if q is None:
        return 0
    arch = s.arch
    kv_heads = max(arch.kv_heads_ // s.tp, 1)
    per_token_layer = 2 * kv_heads * arch.head_dim_ * s.act_bytes  # keys and values
    copies = int(q["quantized_step_copies"])
    residual = min(int(q["quantized_residual_length"]), cache_len)
    size = per_token_layer * s.batch * (copies * cache_len + arch.kv_layers_ * residual)
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("kv_dequant_buffer", size, "")
    return acc.add(
        "kv_dequant_buffer",
        size,
        f"quantized cache: one layer's {cache_len} tokens dequantized and concatenated"
        f" ({copies} copies in {s.load_dtype}) + {residual} residual tokens per layer",
        key="kv_dequant_buffer",
        copies=copies,
        tokens=cache_len,
        kv_heads=kv_heads,
        head_dim=arch.head_dim_,
        dtype=s.load_dtype,
        residual=residual,
        layers=arch.kv_layers_,
    )


def add_dequant_buffer(s: InferenceSetup, acc: Breakdown) -> int:
    """A loader whose matmul dequantizes the whole weight per call (data/quantizers.toml
    [dequant_per_call.*]): bitsandbytes 4-bit over a prompt of more than one token
    (MatMul4Bit; computed in fp32 unless the config names a dtype), torchao int8 weight-only
    run eagerly and optimum-quanto's int8/float8 weights (every call). The largest Linear sets the transient."""
    rule = dequant_rule(s.fmt)
    tokens = s.batch * s.prompt
    if rule is None or (rule["single_token_kernel"] and tokens <= 1):
        return 0
    compute = s.w.compute_dtype or rule.get("default_compute_dtype") or s.load_dtype
    if s.w.compute_dtype is None and "default_compute_dtype" in rule:
        acc.assume("bnb_compute_dtype", compute)
    arch = s.arch
    inter = mlp_width(arch) // s.tp
    widest_weight = arch.hidden * max(inter, arch.hidden)
    widest_out = max(inter, arch.hidden)
    if not arch.tied_embeddings and quantizes_lm_head(s.fmt, s.w.quantize_after_load):
        # the own quantize call took the lm_head too: vocab x hidden, the widest Linear
        widest_weight = max(widest_weight, arch.vocab * arch.hidden)
        widest_out = max(widest_out, arch.vocab)
    size = dequant_bytes(
        widest_weight, widest_out, tokens, s.load_dtype, compute, rule.get("copies", 1)
    )
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("dequant_buffer", size, "")
    return acc.add(
        "dequant_buffer",
        size,
        f"{rule['library']}: widest layer {arch.hidden} x {widest_out} dequantized to"
        f" {s.load_dtype}" + (f" and cast to {compute}" if compute != s.load_dtype else ""),
        key="dequant_buffer",
        library=rule["library"],
        hidden=arch.hidden,
        width=widest_out,
        load_dtype=s.load_dtype,
        compute_dtype=compute,
    )


def add_int8_matmul_buffer(s: InferenceSetup, acc: Breakdown) -> int:
    """bitsandbytes LLM.int8() over the prompt: the widest Linear's int32 accumulator and the
    int8 copies of its input for every prompt token (data/quantizers.toml [int8_matmul.*])."""
    arch = s.arch
    inter = mlp_width(arch) // s.tp
    per_token = int8_matmul_bytes_per_token(
        s.fmt, s.framework, max(inter, arch.hidden), arch.hidden
    )
    if not per_token:
        return 0
    tokens = s.batch * s.prompt
    if s.w.max_num_batched_tokens:
        tokens = min(tokens, s.w.max_num_batched_tokens)
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("int8_matmul_buffer", tokens * per_token, "")
    return acc.add(
        "int8_matmul_buffer",
        tokens * per_token,
        f"LLM.int8(): {tokens} tokens x (int32 output of the widest layer + int8 input copies)",
        key="int8_matmul_buffer",
        tokens=tokens,
        width=max(inter, arch.hidden),
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


def stacked_cache_reserve(s: InferenceSetup) -> int:
    """What the caching allocator keeps reserved, beyond the flat slack, when the model's own
    code grows the prefill's cache by concatenation (runtimes/stacked_cache.py); 0 for a
    model that keeps a cache per layer, a one-token prompt, or a prompt fed in chunks."""
    if not s.arch.stacked_prefill_cache or s.prompt <= 1 or s.w.max_num_batched_tokens:
        return 0
    arch = s.arch
    return reserve_bytes(
        arch.kv_layers_,
        s.batch * s.prompt,
        arch.hidden,
        arch.heads // s.tp,
        max(arch.kv_heads_ // s.tp, 1),
        arch.head_dim_,
        mlp_width(arch) // s.tp,
        int(s.act_bytes),
    )
