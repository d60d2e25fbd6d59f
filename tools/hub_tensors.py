"""Write tests/data/hub/<org>__<name>/tensors.json: the tensor names, dtypes and shapes a
checkpoint of that config.json holds, from which the stand-in Hub builds a real safetensors
header. Names and shapes follow each architecture's modeling file in transformers
(modeling_llama.py, modeling_olmo2.py, modeling_cohere.py, modeling_deepseek.py of
deepseek-ai/deepseek-moe-16b-base, modeling_gptj.py); read 2026-11-30.

Independent of advisor/hubspec on purpose: the test compares what hubspec counts from these
headers with the parameter count on each model card, so a shared formula would prove nothing.

    python tools/hub_tensors.py            # every repo folder that has a config.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HUB_DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "hub"
Tensors = dict[str, list]  # name -> [dtype, shape]


def _llama_layer(c: dict[str, Any], p: str, dt: str, out: Tensors) -> None:
    h, heads = c["hidden_size"], c["num_attention_heads"]
    kv = c.get("num_key_value_heads") or heads
    hd = c.get("head_dim") or h // heads
    bias = c.get("attention_bias") or c.get("use_qkv_bias") or c.get("bias")
    for name, rows in (("q", heads * hd), ("k", kv * hd), ("v", kv * hd)):
        out[f"{p}.self_attn.{name}_proj.weight"] = [dt, [rows, h]]
        if bias:
            out[f"{p}.self_attn.{name}_proj.bias"] = [dt, [rows]]
    out[f"{p}.self_attn.o_proj.weight"] = [dt, [h, heads * hd]]
    if c.get("bias"):  # InternLM: o_proj has a bias too
        out[f"{p}.self_attn.o_proj.bias"] = [dt, [h]]
    mt = c["model_type"]
    if mt == "olmo2":  # QK-norm over the whole projection, norms after attention and MLP
        out[f"{p}.self_attn.q_norm.weight"] = [dt, [heads * hd]]
        out[f"{p}.self_attn.k_norm.weight"] = [dt, [kv * hd]]
        out[f"{p}.post_attention_layernorm.weight"] = [dt, [h]]
        out[f"{p}.post_feedforward_layernorm.weight"] = [dt, [h]]
    elif mt == "cohere":  # one LayerNorm (no bias), attention and MLP in parallel
        out[f"{p}.input_layernorm.weight"] = [dt, [h]]
    else:
        out[f"{p}.input_layernorm.weight"] = [dt, [h]]
        out[f"{p}.post_attention_layernorm.weight"] = [dt, [h]]
        if mt == "stablelm":
            out[f"{p}.input_layernorm.bias"] = [dt, [h]]
            out[f"{p}.post_attention_layernorm.bias"] = [dt, [h]]


def _gated_mlp(h: int, inter: int, p: str, dt: str, out: Tensors) -> None:
    out[f"{p}.gate_proj.weight"] = [dt, [inter, h]]
    out[f"{p}.up_proj.weight"] = [dt, [inter, h]]
    out[f"{p}.down_proj.weight"] = [dt, [h, inter]]


def _deepseek_moe(c: dict[str, Any], i: int, p: str, dt: str, out: Tensors) -> None:
    h = c["hidden_size"]
    dense_first, freq = c.get("first_k_dense_replace", 0), c.get("moe_layer_freq", 1)
    if i < dense_first or (i - dense_first) % freq:
        _gated_mlp(h, c["intermediate_size"], f"{p}.mlp", dt, out)
        return
    experts, width = c["n_routed_experts"], c["moe_intermediate_size"]
    out[f"{p}.mlp.gate.weight"] = [dt, [experts, h]]
    for e in range(experts):
        _gated_mlp(h, width, f"{p}.mlp.experts.{e}", dt, out)
    if c.get("n_shared_experts"):
        _gated_mlp(h, width * c["n_shared_experts"], f"{p}.mlp.shared_experts", dt, out)


def llama_like(c: dict[str, Any], dt: str) -> Tensors:
    h, vocab = c["hidden_size"], c["vocab_size"]
    out: Tensors = {"model.embed_tokens.weight": [dt, [vocab, h]]}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        _llama_layer(c, p, dt, out)
        if c["model_type"] == "deepseek":
            _deepseek_moe(c, i, p, dt, out)
        else:
            _gated_mlp(h, c["intermediate_size"], f"{p}.mlp", dt, out)
    out["model.norm.weight"] = [dt, [h]]
    if c["model_type"] == "stablelm":
        out["model.norm.bias"] = [dt, [h]]
    tied = c.get("tie_word_embeddings", c["model_type"] == "cohere")
    if not tied:
        out["lm_head.weight"] = [dt, [vocab, h]]
    return out


def gpt_neox(c: dict[str, Any], dt: str) -> Tensors:
    """modeling_gpt_neox.py: fused QKV with bias, dense with bias, MLP h_to_4h/4h_to_h with
    biases, two LayerNorms per layer (weight and bias), separate embed_in / embed_out."""
    h, vocab, inter = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    out: Tensors = {"gpt_neox.embed_in.weight": [dt, [vocab, h]]}
    for i in range(c["num_hidden_layers"]):
        p = f"gpt_neox.layers.{i}"
        for ln in ("input_layernorm", "post_attention_layernorm"):
            out[f"{p}.{ln}.weight"] = [dt, [h]]
            out[f"{p}.{ln}.bias"] = [dt, [h]]
        out[f"{p}.attention.query_key_value.weight"] = [dt, [3 * h, h]]
        out[f"{p}.attention.query_key_value.bias"] = [dt, [3 * h]]
        out[f"{p}.attention.dense.weight"] = [dt, [h, h]]
        out[f"{p}.attention.dense.bias"] = [dt, [h]]
        out[f"{p}.mlp.dense_h_to_4h.weight"] = [dt, [inter, h]]
        out[f"{p}.mlp.dense_h_to_4h.bias"] = [dt, [inter]]
        out[f"{p}.mlp.dense_4h_to_h.weight"] = [dt, [h, inter]]
        out[f"{p}.mlp.dense_4h_to_h.bias"] = [dt, [h]]
    out["gpt_neox.final_layer_norm.weight"] = [dt, [h]]
    out["gpt_neox.final_layer_norm.bias"] = [dt, [h]]
    out["embed_out.weight"] = [dt, [vocab, h]]
    return out


def gptq_packed(tensors: Tensors, bits: int, group: int) -> Tensors:
    """AutoGPTQ's checkpoint layout: each decoder-layer Linear weight [out, in] becomes
    qweight I32 [in*bits/32, out], qzeros I32 [in/g, out*bits/32], scales F16 [in/g, out],
    g_idx I32 [in]; embeddings, norms and the output head stay as they were."""
    out: Tensors = {}
    for name, (dtype, shape) in tensors.items():
        if ".layers." not in name or not name.endswith(".weight") or len(shape) != 2:
            out[name] = [dtype if dtype != "BF16" else "F16", shape]
            continue
        rows, cols = shape
        base = name[: -len(".weight")]
        out[f"{base}.qweight"] = ["I32", [cols * bits // 32, rows]]
        out[f"{base}.qzeros"] = ["I32", [cols // group, rows * bits // 32]]
        out[f"{base}.scales"] = ["F16", [cols // group, rows]]
        out[f"{base}.g_idx"] = ["I32", [cols]]
    return out


def gptj(c: dict[str, Any], dt: str) -> Tensors:
    h, vocab = c["n_embd"], c["vocab_size"]
    inner = c.get("n_inner") or 4 * h
    out: Tensors = {"transformer.wte.weight": [dt, [vocab, h]]}
    for i in range(c["n_layer"]):
        p = f"transformer.h.{i}"
        out[f"{p}.ln_1.weight"] = [dt, [h]]
        out[f"{p}.ln_1.bias"] = [dt, [h]]
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[f"{p}.attn.{name}.weight"] = [dt, [h, h]]
        out[f"{p}.mlp.fc_in.weight"] = [dt, [inner, h]]
        out[f"{p}.mlp.fc_in.bias"] = [dt, [inner]]
        out[f"{p}.mlp.fc_out.weight"] = [dt, [h, inner]]
        out[f"{p}.mlp.fc_out.bias"] = [dt, [h]]
    out["transformer.ln_f.weight"] = [dt, [h]]
    out["transformer.ln_f.bias"] = [dt, [h]]
    out["lm_head.weight"] = [dt, [vocab, h]]
    out["lm_head.bias"] = [dt, [vocab]]
    return out


_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}


# config.json subsets (no model_type) name the architecture class instead
_TYPE_OF_CLASS = {"GPTNeoXForCausalLM": "gpt_neox", "LlamaForCausalLM": "llama"}


def tensors_for(config: dict[str, Any]) -> Tensors:
    dt = _DTYPES.get(str(config.get("torch_dtype") or config.get("dtype")), "F16")
    config = {"model_type": _TYPE_OF_CLASS.get((config.get("architectures") or [""])[0])} | config
    if config["model_type"] == "gptj":
        tensors = gptj(config, dt)
    elif config["model_type"] == "gpt_neox":
        tensors = gpt_neox(config, dt)
    else:
        tensors = llama_like(config, dt)
    q = config.get("quantization_config") or {}
    if q.get("quant_method") == "gptq":
        return gptq_packed(tensors, int(q["bits"]), int(q["group_size"]))
    return tensors


def main(folders: list[Path]) -> None:
    for folder in folders:
        config = json.loads((folder / "config.json").read_text())
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("tensors") != "generated":
            continue
        tensors = tensors_for(config)
        (folder / "tensors.json").write_text(json.dumps(tensors, separators=(",", ":")))
        print(f"{folder.name}: {len(tensors)} tensors")


if __name__ == "__main__":
    names = sys.argv[1:]
    main(
        [HUB_DATA / n for n in names]
        if names
        else sorted(p.parent for p in HUB_DATA.glob("*/config.json"))
    )
