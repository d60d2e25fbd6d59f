"""Transformer workloads: inference through a runtime, or training through a recipe."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.resolve import default_format
from advisor.memory.terms import Breakdown, band, finish
from advisor.memory.training import estimate_training
from advisor.memory.transformer import (
    CONCAT_CACHE_FRAMEWORKS,
    STATIC_CACHE_FRAMEWORKS,
    estimate_weight_bytes,
    kv_bytes_per_token,
    mlp_width,
)
from advisor.models import (
    Attention,
    Estimate,
    Mode,
    Parallelism,
    ResolvedModel,
    Workload,
)


def estimate_transformer(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: Breakdown
) -> Estimate:
    arch = model.arch
    assert arch is not None
    params = model.params_b * 1e9
    fmt = default_format(w, spec, acc)
    n = w.num_gpus
    par = w.parallelism or (Parallelism.none if n == 1 else None)
    if par is None:
        par = Parallelism.tp if not w.mode.is_training else Parallelism.zero3
        acc.assume("parallelism", par.value)
    framework = w.framework.lower() if w.framework else None
    attention = w.attention or Attention.sdpa
    if w.attention is None:
        acc.assume("attention", "sdpa")

    if fmt == "nf4" and framework == "torchtune":
        fmt = "nf4-dq"  # torchao's NF4 (torchtune QLoRA) double-quantizes its scalers
    weight_bytes = estimate_weight_bytes(params, arch, fmt)
    weight_formula = f"{model.params_b:g}B params x {catalog.find_format(fmt).bits:g} bits ({fmt})"  # type: ignore[union-attr]
    # Tensor and pipeline parallel split the weights; ZeRO-3/FSDP shard them.
    split = n if par in (Parallelism.tp, Parallelism.pp, Parallelism.zero3, Parallelism.fsdp) else 1
    if w.mode.is_training:
        return estimate_training(
            w,
            model,
            spec,
            acc,
            arch,
            params,
            fmt,
            weight_bytes,
            weight_formula,
            par,
            split,
            attention,
            framework,
        )

    # ---- inference ----
    batch = w.batch_size or 1
    if w.batch_size is None:
        acc.assume("batch_size", 1)
    if w.context_tokens:
        prompt = w.prompt_tokens or max(w.context_tokens - (w.new_tokens or 0), 1)
        context = w.context_tokens
    elif w.prompt_tokens is not None or w.new_tokens is not None:
        prompt = w.prompt_tokens or 1
        context = prompt + (w.new_tokens or 0)
    else:
        context = min(4096, arch.max_context_tokens)
        prompt = context
        acc.assume("context_tokens", context)
    if w.mode == Mode.load_only:
        allocated = acc.add(
            "weights",
            weight_bytes / split,
            weight_formula + (f" / {split} cards" if split > 1 else ""),
        )
        return finish(acc, allocated, w, False, band(model, spec, False))

    kv_dtype = w.kv_cache_dtype or ("fp16" if fmt in ("fp16", "fp32") else "bf16")
    if w.kv_cache_dtype is None:
        acc.assume("kv_cache_dtype", kv_dtype)
    cache_len = context
    if framework in STATIC_CACHE_FRAMEWORKS and w.context_tokens is None:
        cache_len = max(context, min(arch.max_context_tokens, 8192))
    per_tok = kv_bytes_per_token(arch, kv_dtype, cache_len, framework)
    kv_split = n if par == Parallelism.tp else 1
    kv = per_tok * cache_len * batch / kv_split
    concat = framework in CONCAT_CACHE_FRAMEWORKS

    w_b = acc.add(
        "weights", weight_bytes / split, weight_formula + (f" / {split} cards" if split > 1 else "")
    )
    kv_b = acc.add(
        "kv_cache",
        kv,
        f"{per_tok / 1024:.0f} KiB/token ({arch.layers} layers x {arch.kv_heads_} KV heads x "
        f"{arch.head_dim_} x 2 x {kv_dtype}) x {cache_len} tokens x batch {batch}"
        + (f" / {kv_split} cards" if kv_split > 1 else ""),
    )
    # Prefill: one layer's transients for every prompt token at once (engines chunk it).
    prefill_tokens = batch * prompt
    if framework in ("vllm", "sglang"):
        prefill_tokens = min(prefill_tokens, 8192)
    h = arch.hidden
    act_per_token = (6 * h + 4 * mlp_width(arch) / kv_split) * 2  # 16-bit buffers of one layer
    attn = 0.0
    if attention == Attention.eager:
        attn = batch * arch.heads / kv_split * prompt * prompt * 6
    logits_tokens = prefill_tokens if concat else batch
    logits = logits_tokens * arch.vocab * 6 / kv_split  # 16-bit logits + fp32 upcast
    # Layer buffers are freed before the lm_head runs: the prefill peak is one or the other.
    prefill = max(prefill_tokens * act_per_token + attn, logits)
    # The concatenated copy exists at decode steps only: generating one token is a prefill.
    decodes = w.new_tokens is None or w.new_tokens > 1
    decode_extra = kv if concat and decodes else 0.0
    if prefill >= decode_extra:
        act_b = acc.add(
            "activations",
            prefill,
            f"prefill of {prefill_tokens} tokens: hidden/MLP buffers of one layer"
            + (" + eager attention scores" if attn else "")
            + f" + logits over {arch.vocab} tokens",
        )
    else:
        act_b = acc.add(
            "activations",
            decode_extra,
            "decode step: generate() concatenates the KV cache, old and new copies coexist",
        )
    allocated = w_b + kv_b + act_b
    return finish(acc, allocated, w, False, band(model, spec, False))
