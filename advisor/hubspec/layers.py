"""Each layer of a published config.json: what mixes its tokens (attention, a sliding window,
linear attention, a short convolution, a mamba block) and whether its MLP is dense, a
mixture of experts or absent. Attention layers keep a KV cache that grows with the tokens;
the others keep a fixed-size state per sequence. Parameter counts per layer follow the
modeling files named in advisor/data/hub_config.toml.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from advisor.hubspec.keys import first, model_type, vocabulary

ATTENTION_KINDS = ("attention", "sliding", "parallel")


def _key(config: dict[str, Any], group: str, field: str) -> Any:
    for key in vocabulary()[group][field]:
        value = config.get(key)
        if value is not None:
            return value
    return None


def _has_mamba2_keys(config: dict[str, Any]) -> bool:
    return (
        _key(config, "ssm_keys", "heads") is not None
        or _key(config, "ssm_keys", "head_dim") is not None
    )


def _linear_block(config: dict[str, Any]) -> dict[str, Any] | None:
    """A linear-attention block's own nested config (Kimi-Linear's linear_attn_config)."""
    block = _key(config, "ssm_keys", "linear_block")
    return block if isinstance(block, dict) else None


def _kda(config: dict[str, Any]) -> tuple[int, int, int] | None:
    """(heads, head width, conv kernel) of a KDA block: q, k and v alike."""
    block = _linear_block(config)
    heads = _key(block, "ssm_keys", "linear_block_heads") if block else None
    if block is None or heads is None:
        return None
    dim = int(_key(block, "ssm_keys", "linear_block_head_dim") or 128)
    return int(heads), dim, int(_key(block, "ssm_keys", "linear_block_conv") or 4)


def mixers(config: dict[str, Any], layers: int) -> list[str]:
    """One kind per layer: attention | sliding | linear | conv | mamba1 | mamba2 | parallel |
    none (an MLP-only layer of Nemotron-H). A plain transformer reads all "attention"."""
    kinds = vocabulary()["layer_kinds"]
    mtype = model_type(config)
    ssm_only = vocabulary()["ssm_only"]
    mamba = "mamba2" if _has_mamba2_keys(config) else "mamba1"
    if mtype in ssm_only["mamba1"]:
        return ["mamba1"] * layers
    if mtype in ssm_only["mamba2"]:
        return ["mamba2"] * layers
    if mtype in ssm_only["parallel"]:
        return ["parallel"] * layers
    listed = config.get("layer_types") or config.get("layers_block_type")
    if isinstance(listed, list) and len(listed) == layers:
        out = [kinds.get(str(t).lower(), "attention") for t in listed]
        return [mamba if k == "mamba" else k for k in out]
    pattern = config.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) == layers:
        return [vocabulary()["pattern_kinds"].get(ch, "attention") for ch in pattern]
    if isinstance(config.get("attn_layer_indices"), list):  # Bamba
        idx = set(config["attn_layer_indices"])
        return ["attention" if i in idx else mamba for i in range(layers)]
    if config.get("attn_layer_period"):  # Jamba
        period, offset = int(config["attn_layer_period"]), int(config.get("attn_layer_offset", 0))
        return ["attention" if i % period == offset else mamba for i in range(layers)]
    if isinstance(config.get("full_attn_idxs"), list):  # LFM2 before layer_types
        idx = set(config["full_attn_idxs"])
        return ["attention" if i in idx else "conv" for i in range(layers)]
    block = _linear_block(config)
    if block is not None and isinstance(_key(block, "ssm_keys", "linear_block_attention"), list):
        # Kimi-Linear: MLA at the listed layers (1-based), KDA elsewhere
        idx = {int(i) - 1 for i in _key(block, "ssm_keys", "linear_block_attention")}
        return ["attention" if i in idx else "linear" for i in range(layers)]
    if isinstance(config.get("attn_type_list"), list):  # MiniMax: 1 softmax, 0 lightning
        types = config["attn_type_list"]
        return ["attention" if t == 1 else "linear" for t in types[:layers]]
    if config.get("full_attention_interval") and _key(config, "ssm_keys", "linear_value_heads"):
        n = int(config["full_attention_interval"])
        return ["attention" if (i + 1) % n == 0 else "linear" for i in range(layers)]
    return ["attention"] * layers


def mlps(config: dict[str, Any], layers: int, kinds: list[str]) -> list[str]:
    """Each layer's MLP: dense | moe | none (see hub_config.toml [moe_layout]). Nemotron-H
    gives each layer one block: "-" an MLP, "E" experts, a mamba or attention layer none;
    a pure state-space model (Mamba, Falcon-Mamba) has no MLP at all."""
    pattern = config.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) == layers:
        return [{"-": "dense", "E": "moe"}.get(ch, "none") for ch in pattern]
    if all(k in ("mamba1", "mamba2") for k in kinds) and model_type(config) in (
        vocabulary()["ssm_only"]["mamba1"] + vocabulary()["ssm_only"]["mamba2"]
    ):
        return ["none"] * layers
    experts = first(config, "experts")
    if not experts or int(experts) <= 1:
        return ["dense"] * layers
    only = set(config.get("mlp_only_layers") or [])
    if config.get("expert_layer_period"):  # Jamba
        period = int(config["expert_layer_period"])
        offset = int(config.get("expert_layer_offset", 0))
        moe = [i % period == offset for i in range(layers)]
    elif config.get("interleave_moe_layer_step"):  # Llama 4: every step-th layer
        step = int(config["interleave_moe_layer_step"])
        moe = [(i + 1) % step == 0 for i in range(layers)]
    elif config.get("decoder_sparse_step"):  # Qwen-MoE: (i + 1) % step == 0
        step = int(config["decoder_sparse_step"])
        moe = [(i + 1) % step == 0 for i in range(layers)]
    else:  # DeepSeek first_k_dense_replace / moe_layer_freq; LFM2-MoE num_dense_layers
        dense_first = int(
            config.get("first_k_dense_replace") or config.get("num_dense_layers") or 0
        )
        freq = max(int(config.get("moe_layer_freq") or 1), 1)
        moe = [i >= dense_first and (i - dense_first) % freq == 0 for i in range(layers)]
    return ["moe" if m and i not in only else "dense" for i, m in enumerate(moe)]


@dataclass
class SsmShape:
    """A state-space or linear-attention block's widths, from its config keys."""

    hidden: int
    d_inner: int
    heads: int
    head_dim: int
    groups: int
    state: int
    conv: int


def ssm_shape(config: dict[str, Any], hidden: int) -> SsmShape:
    heads = _key(config, "ssm_keys", "heads")
    head_dim = _key(config, "ssm_keys", "head_dim")
    expand = _key(config, "ssm_keys", "expand") or 2
    d_inner = _key(config, "ssm_keys", "d_inner") or (
        int(heads) * int(head_dim) if heads and head_dim else int(expand) * hidden
    )
    d_inner = int(d_inner)
    head_dim = int(head_dim or 64)
    return SsmShape(
        hidden=hidden,
        d_inner=d_inner,
        heads=int(heads or d_inner // head_dim),
        head_dim=head_dim,
        groups=int(_key(config, "ssm_keys", "groups") or 1),
        state=int(_key(config, "ssm_keys", "state") or 16),
        conv=int(_key(config, "ssm_keys", "conv") or 4),
    )


def state_elements(kind: str, config: dict[str, Any], hidden: int) -> int:
    """Per sequence, one layer's fixed state (elements, not bytes): what the modeling file's
    cache allocates for it whatever the length."""
    if kind == "conv":
        return hidden * int(_key(config, "ssm_keys", "conv_cache") or 3)
    if kind == "linear" and (kda := _kda(config)) is not None:
        heads, d, kernel = kda  # a d x d state per head, and the q, k, v convolutions' windows
        return heads * d * d + 3 * heads * d * kernel
    if kind == "linear":
        nk = _key(config, "ssm_keys", "linear_key_heads")
        if nk is None:  # MiniMax lightning attention: one head_dim x head_dim state per head
            heads = int(first(config, "heads") or 1)
            hd = int(config.get("head_dim") or hidden // heads)
            return heads * hd * hd
        nv = int(_key(config, "ssm_keys", "linear_value_heads"))
        dk = int(_key(config, "ssm_keys", "linear_key_dim"))
        dv = int(_key(config, "ssm_keys", "linear_value_dim"))
        kernel = int(_key(config, "ssm_keys", "linear_conv") or 4)
        return nv * dk * dv + (2 * int(nk) * dk + nv * dv) * kernel
    if kind == "mamba1":
        s = ssm_shape(config, hidden)
        return s.d_inner * s.conv + s.d_inner * s.state
    if kind in ("mamba2", "parallel"):
        s = ssm_shape(config, hidden)
        return (s.d_inner + 2 * s.groups * s.state) * s.conv + s.heads * s.head_dim * s.state
    return 0


def mixer_params(kind: str, config: dict[str, Any], hidden: int, attention: int) -> int:
    """One layer's token-mixer weights; `attention` is an attention block's (MLA or not)."""
    h = hidden
    if kind in ("attention", "sliding"):
        return attention
    if kind == "conv":  # LFM2 ShortConv: in_proj h -> 3h, depthwise conv, out_proj
        return 3 * h * h + h * int(_key(config, "ssm_keys", "conv_cache") or 3) + h * h
    if kind == "linear" and (kda := _kda(config)) is not None:
        heads, d, kernel = kda
        width = heads * d
        # q, k, v, o; the decay gate and the output gate, each low-rank (h -> d -> width);
        # beta (h -> heads); A_log, dt_bias; the three short convolutions; the output norm
        gates = 2 * (h * d + d * width)
        return 4 * h * width + gates + h * heads + heads + width + 3 * width * kernel + d
    if kind == "linear":
        nk = _key(config, "ssm_keys", "linear_key_heads")
        if nk is None:  # lightning attention: q, k, v, o and an output gate
            return attention + h * h
        nv = int(_key(config, "ssm_keys", "linear_value_heads"))
        dk = int(_key(config, "ssm_keys", "linear_key_dim"))
        dv = int(_key(config, "ssm_keys", "linear_value_dim"))
        kernel = int(_key(config, "ssm_keys", "linear_conv") or 4)
        key_dim, value_dim = int(nk) * dk, nv * dv
        in_proj = h * (2 * key_dim + 2 * value_dim) + h * 2 * nv  # qkvz and ba
        return in_proj + (2 * key_dim + value_dim) * kernel + value_dim * h + 2 * nv + dv
    if kind == "mamba1":
        s = ssm_shape(config, h)
        dt_rank = int(_key(config, "ssm_keys", "dt_rank") or math.ceil(h / 16))
        return (
            h * 2 * s.d_inner
            + s.d_inner * (s.conv + 1)
            + s.d_inner * (dt_rank + 2 * s.state)
            + dt_rank * s.d_inner
            + s.d_inner
            + s.d_inner * s.state
            + s.d_inner
            + s.d_inner * h
        )
    if kind in ("mamba2", "parallel"):
        s = ssm_shape(config, h)
        conv_dim = s.d_inner + 2 * s.groups * s.state
        mamba = (
            h * (2 * s.d_inner + 2 * s.groups * s.state + s.heads)
            + conv_dim * (s.conv + 1)
            + 3 * s.heads
            + s.d_inner
            + s.d_inner * h
        )
        return mamba + (attention if kind == "parallel" else 0)
    return 0


@dataclass
class LayerPlan:
    kinds: list[str]  # token mixer per layer
    mlps: list[str]  # dense | moe | none per layer

    @property
    def attention_layers(self) -> int:
        return sum(k in ATTENTION_KINDS for k in self.kinds)

    def count(self, *kinds: str) -> int:
        return sum(k in kinds for k in self.kinds)


def layer_plan(config: dict[str, Any], layers: int) -> LayerPlan:
    kinds = mixers(config, layers)
    return LayerPlan(kinds=kinds, mlps=mlps(config, layers, kinds))


def recurrent_state_elements(config: dict[str, Any], plan: LayerPlan, hidden: int) -> int:
    return sum(state_elements(k, config, hidden) for k in plan.kinds)
