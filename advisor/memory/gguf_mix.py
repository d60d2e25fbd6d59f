"""A GGUF K-quant preset's file size from its tensor types (data/gguf_mix.toml: llama.cpp's
llama_tensor_get_type), for a dense decoder whose shapes the catalog holds: the output
matrix at Q6_K, some attn_v / ffn_down at Q6_K, and rows not a multiple of 256 at the
legacy type that replaces a K-quant there."""

from __future__ import annotations

from functools import cache
from typing import Any

from advisor import catalog
from advisor.models.architecture import Architecture

QK_K = 256


@cache
def _table() -> dict[str, Any]:
    return catalog._load("gguf_mix.toml")


def _bytes(kind: str, rows: int, count: int) -> float:
    """`count` weights of type `kind` in tensors whose rows hold `rows` weights."""
    t = _table()
    if rows % QK_K != 0:
        kind = t["fallback"].get(kind, kind)
    return count * t["bits"][kind] / 8


def _use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def mixed_weight_bytes(fmt: str, params: float, arch: Architecture | None) -> int | None:
    """The preset's bytes, or None where the mix does not apply (no such preset, no shapes,
    a mixture of experts): the format's whole-file bits per weight are used then."""
    preset = _table()["preset"].get(fmt)
    if preset is None or arch is None or arch.experts or arch.intermediate is None:
        return None
    if arch.kv_lora_rank or arch.recurrent_state_elements or arch.attention_layers is not None:
        return None
    h, n = arch.hidden, arch.layers
    q_out = arch.heads * arch.head_dim_
    kv = arch.kv_heads_ * arch.head_dim_
    inter = arch.intermediate
    base, more = preset["base"], preset.get("more_bits")
    emb = arch.vocab * h
    total = _bytes(preset["output"], h, emb)
    if not arch.tied_embeddings:
        total += _bytes(base, h, emb)
    up = (2 if arch.gated_mlp else 1) * h * inter
    counted = emb * (1 if arch.tied_embeddings else 2)
    for i in range(n):
        v_kind = down_kind = base
        if more is not None and _use_more_bits(i, n):
            v_kind = down_kind = more
        if "first_ffn_down" in preset and i < n // 8:
            down_kind = preset["first_ffn_down"]
        if "first_attn_v" in preset and i < 4:
            v_kind = preset["first_attn_v"]
        total += _bytes(base, h, h * q_out + h * kv + up) + _bytes(base, q_out, q_out * h)
        total += _bytes(v_kind, h, h * kv) + _bytes(down_kind, inter, inter * h)
        counted += 2 * h * q_out + 2 * h * kv + up + inter * h
    # the mix's bytes per weight over the parameters the catalog counts (norms and biases,
    # which the shapes omit, at the same rate; a model sized from its parameter count alone
    # borrows a template's shapes, so only their mix carries over)
    return int(params * total / counted)
