"""advisor.hubspec, pure: published config.json and quantization_config blocks -> the
engine's architecture, weight format and real bits per weight."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor import catalog
from advisor.hubspec import HubFacts, architecture, count_tensors, hub_model, quant_info
from advisor.hubspec.spec import inactive_expert_params, params_from_config

CONFIGS = Path(__file__).parent / "data" / "hub_configs"


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def test_deepseek_mla_ranks_experts_and_size_match_the_catalog_entry() -> None:
    c = config("deepseek-ai__DeepSeek-V2-Lite")
    a = architecture(c)
    assert a is not None
    assert (a.kv_lora_rank, a.qk_rope_head_dim, a.head_dim) == (512, 64, 128)
    assert (a.experts, a.experts_per_token, a.shared_experts, a.moe_intermediate) == (
        64,
        6,
        2,
        1408,
    )
    spec = catalog.models()["deepseek-v2-lite"]  # transcribed from the same config.json
    total = params_from_config(a, c)
    assert total / 1e9 == pytest.approx(spec.params_b, rel=0.01)
    active = (total - inactive_expert_params(a, c)) / 1e9
    assert active == pytest.approx(spec.active_params_b, rel=0.1)


def test_vision_language_config_reads_the_nested_text_config() -> None:
    a = architecture(config("mistralai__Ministral-3-3B-Instruct-2512"))
    assert a is not None
    assert (a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim) == (26, 3072, 32, 8, 128)
    assert (a.vocab, a.max_context_tokens, a.tied_embeddings) == (131072, 262144, True)
    assert a.sliding_window is None  # published as null


def test_vision_tower_parameters_are_counted_apart() -> None:
    tensors = {
        "vision_tower.transformer.layers.0.attention.q_proj.weight": ("BF16", [1024, 1024]),
        "language_model.model.layers.0.self_attn.q_proj.weight": ("BF16", [4096, 3072]),
    }
    counts = count_tensors(tensors)
    assert counts.vision_params == 1024 * 1024
    assert counts.params == 1024 * 1024 + 4096 * 3072


# quantization_config blocks as published, each quoted where named:
GPTQ = {  # TheBloke/Llama-2-7B-Chat-GPTQ config.json, quoted by intel/neural-compressor
    "bits": 4,
    "group_size": 128,
    "damp_percent": 0.01,
    "desc_act": True,
    "sym": True,
    "true_sequential": True,
    "model_name_or_path": None,
    "model_file_base_name": "model",
    "quant_method": "gptq",
}
AWQ = {  # QuantTrio/DeepSeek-V3.2-Exp-AWQ config.json, quoted in a vLLM issue
    "quant_method": "awq",
    "bits": 4,
    "group_size": 128,
    "version": "gemm",
    "zero_point": True,
    "modules_to_not_convert": ["mlp.gate.", "indexer", "model.layers.0."],
}
FP8 = {  # deepseek-ai/DeepSeek-V3 config.json (block-wise FP8), quoted in verl-das docs
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [128, 128],
}
MXFP4 = {  # openai/gpt-oss-120b config.json, quoted in a gpt-oss loading guide
    "modules_to_not_convert": [
        "model.layers.*.self_attn",
        "model.layers.*.mlp.router",
        "model.embed_tokens",
        "lm_head",
    ],
    "quant_method": "mxfp4",
}
BNB_NF4 = {  # a pre-quantized bitsandbytes checkpoint, as vllm-omni's tests quote one
    "quant_method": "bitsandbytes",
    "_load_in_4bit": True,
    "_load_in_8bit": False,
    "load_in_4bit": True,
    "load_in_8bit": False,
    "bnb_4bit_compute_dtype": "bfloat16",
    "bnb_4bit_quant_storage": "uint8",
    "bnb_4bit_quant_type": "nf4",
    "bnb_4bit_use_double_quant": True,
}
CT_FP8 = {  # compressed-tensors float-quantized W8A8, as mistral FP8 conversions write it
    "config_groups": {
        "group_0": {
            "input_activations": {"dynamic": True, "num_bits": 8, "type": "float"},
            "targets": ["Linear"],
            "weights": {"dynamic": False, "num_bits": 8, "strategy": "tensor", "type": "float"},
        }
    },
    "format": "float-quantized",
    "quant_method": "compressed-tensors",
}
CT_W4A16 = {  # compressed-tensors pack-quantized int4, group 128, no activation quant
    "config_groups": {
        "group_0": {
            "input_activations": None,
            "targets": ["Linear"],
            "weights": {"num_bits": 4, "type": "int", "group_size": 128, "symmetric": True},
        }
    },
    "format": "pack-quantized",
    "quant_method": "compressed-tensors",
}


@pytest.mark.parametrize(
    ("block", "format_id", "bits_per_weight"),
    [
        (GPTQ, "gptq-4bit", 4.156),
        (AWQ, "awq-4bit", 4.156),
        (FP8, "fp8", 8.0),
        (MXFP4, "mxfp4", 4.25),
        (BNB_NF4, "nf4-dq", 4.127),
        (CT_FP8, "fp8-w8a8", 8.0),
        (CT_W4A16, "int4", 4.156),
    ],
)
def test_quantization_config_gives_the_format_and_real_bits(
    block: dict, format_id: str, bits_per_weight: float
) -> None:
    q = quant_info({"quantization_config": block})
    assert q is not None and q.format_id == format_id
    assert q.bits_per_weight == pytest.approx(bits_per_weight, abs=0.002)
    assert catalog.find_format(format_id) is not None


def test_packed_tensors_count_as_the_weights_they_hold() -> None:
    awq = quant_info({"quantization_config": AWQ})
    tensors = {
        "model.layers.0.mlp.down_proj.qweight": ("I32", [4096 // 8, 2048]),
        "model.layers.0.mlp.down_proj.qzeros": ("I32", [32, 2048 // 8]),
        "model.layers.0.mlp.down_proj.scales": ("F16", [32, 2048]),
    }
    assert count_tensors(tensors, awq).params == 4096 * 2048
    bnb = quant_info({"quantization_config": BNB_NF4})
    tensors = {
        "model.layers.0.mlp.up_proj.weight": ("U8", [4096 * 2048 // 2, 1]),
        "model.layers.0.mlp.up_proj.weight.absmax": ("F32", [4096 * 2048 // 64]),
        "model.layers.0.mlp.up_proj.weight.quant_state.bitsandbytes__nf4": ("U8", [120]),
    }
    assert count_tensors(tensors, bnb).params == 4096 * 2048
    mx = quant_info({"quantization_config": MXFP4})
    tensors = {
        "model.layers.0.mlp.experts.down_proj_blocks": ("U8", [32, 2880, 90, 16]),
        "model.layers.0.mlp.experts.down_proj_scales": ("U8", [32, 2880, 90]),
    }
    assert count_tensors(tensors, mx).params == 32 * 2880 * 2880


def test_no_config_and_no_weights_is_no_model() -> None:
    assert hub_model(HubFacts(repo_id="a/b", read_at="2026-11-30T00:00:00+00:00")) is None


def test_the_source_names_the_repo_revision_and_date() -> None:
    facts = HubFacts(
        repo_id="org/name",
        sha="0123456789abcdef",
        read_at="2026-11-30T12:00:00+00:00",
        config=config("deepseek-ai__DeepSeek-V2-Lite"),
    )
    model = hub_model(facts)
    assert model is not None and model.params_from == "config"
    assert model.spec.source == (
        "Hub config.json of org/name @ 0123456789 read 2026-11-30; parameters from config"
    )


def test_a_config_past_the_engines_schema_is_sized_from_its_weights_alone() -> None:
    from advisor.hubspec import TensorCounts

    facts = HubFacts(
        repo_id="org/odd",
        read_at="2026-11-30T00:00:00+00:00",
        config={"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 99_999},
        tensors=TensorCounts(params=7_000_000, stored_by_dtype={"BF16": 7_000_000}),
    )
    model = hub_model(facts)
    assert model is not None and model.spec.arch is None
    assert model.spec.params_b == pytest.approx(0.007)
