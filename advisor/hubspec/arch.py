"""A published config.json -> the engine's Architecture (the fields memory depends on).

Key names and per-type defaults are data (advisor/data/hub_config.toml); this module only
reads them in order. A composite model (vision-language) keeps its language model's fields
in a nested `text_config`; those are the ones an LLM estimate needs.
"""

from __future__ import annotations

import math
from typing import Any

from advisor.hubspec.keys import first, model_type, text_config, vocabulary
from advisor.hubspec.layers import layer_plan, recurrent_state_elements
from advisor.models.architecture import Architecture

__all__ = ["architecture", "first", "model_type", "text_config", "vocabulary"]

# The engine's schema bounds (advisor.models.architecture.Architecture): a config past them is capped.
MAX_CONTEXT_TOKENS = 10_000_000
MIN_CONTEXT_TOKENS = 64


def tied_embeddings(config: dict[str, Any]) -> bool:
    if config.get("tie_word_embeddings") is not None:
        return bool(config["tie_word_embeddings"])
    return model_type(config) not in vocabulary()["untied_by_default"]["model_types"]


def gated_mlp(config: dict[str, Any]) -> bool:
    return model_type(config) not in vocabulary()["plain_mlp"]["model_types"]


def code_flag(config: dict[str, Any], name: str) -> bool:
    """A trait of the model's code its type implies (data/hub_config.toml [name]); a type
    shared by code generations names the config key only the listed one has."""
    table = vocabulary()[name]
    kind = model_type(config)
    if kind not in table["model_types"]:
        return False
    key = table.get("requires_key", {}).get(kind)
    return key is None or key in config


def kv_heads(config: dict[str, Any], heads: int) -> int:
    if (
        config.get("multi_query")
        and model_type(config) in vocabulary()["multi_query"]["model_types"]
    ):
        return 1
    value = first(config, "kv_heads")
    return int(value) if value else heads


def sliding(config: dict[str, Any], layers: int) -> tuple[int | None, float]:
    """(window, share of layers that use it). transformers' own conventions: Qwen2 keeps a
    `sliding_window` it does not use unless `use_sliding_window`; Gemma 2 alternates
    (every other layer); Gemma 3 has one global layer per `sliding_window_pattern`; newer
    configs list `layer_types`."""
    window = config.get("sliding_window")
    if not window or config.get("use_sliding_window") is False:
        return None, 0.0
    types = config.get("layer_types")
    if isinstance(types, list) and types:
        return int(window), sum(t == "sliding_attention" for t in types) / len(types)
    pattern = config.get("sliding_window_pattern")
    if isinstance(pattern, int) and pattern > 1:
        return int(window), (pattern - 1) / pattern
    if model_type(config) == "gemma2":
        return int(window), math.floor(layers / 2) / layers
    return int(window), 1.0


def moe_fields(config: dict[str, Any], hidden: int) -> dict[str, int | None]:
    experts = first(config, "experts")
    if not experts or int(experts) <= 1:
        return {}
    per_token = first(config, "experts_per_token")
    moe_int = first(config, "moe_intermediate") or first(config, "intermediate")
    shared = first(config, "shared_experts") or 0
    # Qwen-MoE states one shared expert by its width, not a count
    shared_width = next(
        (config[k] for k in vocabulary()["moe_layout"]["shared_width"] if config.get(k)), None
    )
    if not shared and shared_width and moe_int:
        shared = max(1, round(int(shared_width) / int(moe_int)))
    return {
        "experts": int(experts),
        "experts_per_token": int(per_token) if per_token else None,
        "moe_intermediate": int(moe_int) if moe_int else None,
        "shared_experts": int(shared),
    }


def architecture(config: dict[str, Any]) -> Architecture | None:
    """None when the config lacks what a transformer estimate needs (layers, width, heads)."""
    c = text_config(config)
    layers, hidden, heads = first(c, "layers"), first(c, "hidden"), first(c, "heads")
    if not (layers and hidden and heads):
        return None
    layers, hidden, heads = int(layers), int(hidden), int(heads)
    window, fraction = sliding(c, layers)
    plan = layer_plan(c, layers)
    attention = plan.attention_layers
    if window and plan.count("sliding"):  # the share of the attention layers, not of all
        fraction = plan.count("sliding") / max(attention, 1)
    head_dim = c.get("head_dim") or (hidden // heads if hidden % heads == 0 else None)
    if c.get("kv_lora_rank"):  # MLA: the value head is what the attention output projects
        head_dim = c.get("v_head_dim") or head_dim
    context = first(c, "context") or 4096
    intermediate = first(c, "intermediate")
    return Architecture(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads(c, heads),
        head_dim=int(head_dim) if head_dim else None,
        intermediate=int(intermediate) if intermediate else None,
        vocab=int(first(c, "vocab") or 32000),
        max_context_tokens=min(max(int(context), MIN_CONTEXT_TOKENS), MAX_CONTEXT_TOKENS),
        tied_embeddings=tied_embeddings(c),
        gated_mlp=gated_mlp(c),
        fused_gate_up=code_flag(c, "fused_gate_up"),
        stacked_prefill_cache=code_flag(c, "stacked_prefill_cache"),
        causal_mask_buffer=code_flag(c, "causal_mask_buffer"),
        sliding_window=window if window and window >= 16 else None,
        sliding_layers_fraction=fraction if window and window >= 16 else 0.0,
        kv_lora_rank=c.get("kv_lora_rank") or None,
        qk_rope_head_dim=c.get("qk_rope_head_dim") if c.get("kv_lora_rank") else None,
        qk_nope_head_dim=c.get("qk_nope_head_dim") if c.get("kv_lora_rank") else None,
        attention_layers=attention if attention < layers else None,
        recurrent_state_elements=recurrent_state_elements(c, plan, hidden),
        state_layers=plan.count("linear", "conv", "mamba1", "mamba2", "parallel"),
        **moe_fields(c, hidden),
    )


def moe_layers(config: dict[str, Any]) -> int:
    """Layers whose MLP is a mixture of experts (advisor/hubspec/layers.py `mlps`)."""
    c = text_config(config)
    layers = int(first(c, "layers") or 0)
    return layer_plan(c, layers).mlps.count("moe")
