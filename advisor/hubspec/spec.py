"""What was read from a Hub repo -> the engine's ModelSpec, the same model the catalog yields.

Parameter counts come, in order of trust, from the safetensors headers (exact, per tensor),
from the GGUF files' sizes (a file's bytes over its quant type's bits per weight), or from
config.json by the usual transformer formula. Which one was used is part of the answer.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.hubspec import arch as archmod
from advisor.hubspec.layers import layer_plan, mixer_params
from advisor.hubspec.quant import QuantInfo, quant_info
from advisor.hubspec.tensors import TensorCounts
from advisor.hubspec.towers import tower_params
from advisor.models.architecture import Architecture
from advisor.models.choices import Kind


class GgufFile(BaseModel):
    name: str
    size_bytes: int
    format_id: str | None = None  # the quant type, when the engine knows it


class HubFacts(BaseModel):
    """Everything a lookup read, as cached: no I/O object, plain data."""

    repo_id: str
    sha: str | None = None
    read_at: str  # ISO 8601, UTC
    config: dict[str, Any] | None = None
    tensors: TensorCounts | None = None
    gguf_files: list[GgufFile] = Field(default_factory=list)


class HubModel(BaseModel):
    spec: ModelSpec
    quant: QuantInfo | None = None
    params_from: str  # safetensors | gguf | config
    gguf_files: list[GgufFile] = Field(default_factory=list)
    read_at: str
    sha: str | None = None
    vision_params_b: float = 0.0  # of params_b, in a vision tower (safetensors names)


_GGUF_QUANT = re.compile(
    r"[-_.](?P<q>i?q\d(?:_[a-z0-9]+)*|f16|bf16|f32)(?:-\d+-of-\d+)?\.gguf$", re.I
)


def gguf_format(filename: str) -> str | None:
    m = _GGUF_QUANT.search(filename)
    if not m:
        return None
    word = {"f16": "fp16", "f32": "fp32", "bf16": "bf16"}.get(m.group("q").lower(), m.group("q"))
    fmt = catalog.find_format(word)
    return fmt.id if fmt else None


def attention_params(a: Architecture, c: dict[str, Any]) -> int:
    """One attention block: q, k, v, o; MLA (DeepSeek) projects through low-rank q/kv, the
    formula following its modeling file."""
    h, hd, kvh = a.hidden, a.head_dim_, a.kv_heads_
    if not a.kv_lora_rank:
        # Qwen3-Next's gated attention: q_proj also yields the output gate (twice as wide)
        gate = h * a.heads * hd if c.get("attn_output_gate") else 0
        return h * a.heads * hd + 2 * h * kvh * hd + a.heads * hd * h + gate
    rope, nope = a.qk_rope_head_dim or 0, int(c.get("qk_nope_head_dim") or 0)
    v, q_rank = int(c.get("v_head_dim") or hd), c.get("q_lora_rank")
    q_in = (
        (h * q_rank + q_rank * a.heads * (nope + rope)) if q_rank else h * a.heads * (nope + rope)
    )
    attn = q_in + h * (a.kv_lora_rank + rope) + a.kv_lora_rank * a.heads * (nope + v)
    return attn + a.heads * v * h


def params_from_config(a: Architecture, config: dict[str, Any]) -> int:
    """Embeddings + per layer (its token mixer: attention, linear attention, a convolution
    or a mamba block; its MLP: dense, experts or none; norms) + output head + the vision
    and audio towers a composite config describes."""
    c = archmod.text_config(config)
    h = a.hidden
    plan = layer_plan(c, a.layers)
    attn = attention_params(a, c)
    mats = 3 if a.gated_mlp else 2
    mlp = {"dense": mats * h * a.intermediate_, "none": 0}
    expert = mats * h * (a.moe_intermediate or a.intermediate_)
    mlp["moe"] = (a.experts or 0) * expert + a.shared_experts * expert + h * (a.experts or 0)
    body = sum(
        mixer_params(kind, c, h, attn) + mlp[m] + 2 * h
        for kind, m in zip(plan.kinds, plan.mlps, strict=True)
    )
    head = 0 if a.tied_embeddings else a.vocab * h
    vision, audio = tower_params(config, h)
    return body + a.vocab * h + h + head + vision + audio


def inactive_expert_params(a: Architecture, config: dict[str, Any]) -> int:
    """Expert weights a token does not touch: (experts - experts_per_token) per MoE layer."""
    if not a.experts or not a.experts_per_token:
        return 0
    mats = 3 if a.gated_mlp else 2
    expert = mats * a.hidden * (a.moe_intermediate or a.intermediate_)
    return archmod.moe_layers(config) * (a.experts - a.experts_per_token) * expert


def _gguf_params(files: list[GgufFile]) -> int | None:
    """The least-quantized file's bytes over its bits per weight."""
    known = [(catalog.formats()[f.format_id].bits, f) for f in files if f.format_id]
    if not known:
        return None
    bits, f = max(known, key=lambda bf: bf[0])
    return int(f.size_bytes * 8 / bits)


def hub_model(facts: HubFacts) -> HubModel | None:
    """None when nothing read says how big the model is (no config, weights or GGUF)."""
    config = facts.config or {}
    try:
        a = archmod.architecture(config) if config else None
    except (ValidationError, ValueError, TypeError):
        # a config.json past the engine's schema (or malformed): size it without one
        a = None
    try:
        quant = quant_info(config) if config else None
    except (ValidationError, ValueError, TypeError):
        quant = None
    if facts.tensors and facts.tensors.params > 0:
        params, source = facts.tensors.params, "safetensors"
    elif facts.gguf_files and (g := _gguf_params(facts.gguf_files)):
        params, source = g, "gguf"
    elif a is not None:
        params, source = params_from_config(a, config), "config"
    else:
        return None
    active = params - inactive_expert_params(a, config) if a is not None else params
    fmt = quant.format_id if quant else None
    if source == "gguf":  # the file Ollama and llama.cpp users most often pick, if present
        have = [f.format_id for f in facts.gguf_files if f.format_id]
        fmt = "q4_k_m" if "q4_k_m" in have else (have[0] if have else None)
    day = facts.read_at[:10]
    rev = f" @ {facts.sha[:10]}" if facts.sha else ""
    what = "config.json" if config else "file listing"
    family = archmod.model_type(archmod.text_config(config)) if config else "gguf"
    spec = ModelSpec(
        id=facts.repo_id,
        name=facts.repo_id,
        kind=Kind.llm,
        family=family or "unknown",
        params_b=params / 1e9,
        active_params_b=active / 1e9 if a is not None and a.experts else None,
        default_format=fmt,
        source=f"Hub {what} of {facts.repo_id}{rev} read {day}; parameters from {source}",
        arch=a,
    )
    return HubModel(
        spec=spec,
        quant=quant,
        params_from=source,
        gguf_files=facts.gguf_files,
        read_at=facts.read_at,
        sha=facts.sha,
        vision_params_b=(
            facts.tensors.vision_params / 1e9
            if facts.tensors
            else sum(tower_params(config, a.hidden)) / 1e9
            if a is not None and source == "config"
            else 0.0
        ),
    )
