"""A LoRA target list said in words: "the language model's linear layers" with no projection
named adapts every Linear, as the trainers that say so do (PEFT target_modules="all-linear",
InternVL's wrap_llm_lora, VideoLLaMA2's find_all_linear_names); named projections keep
their own reading."""

from __future__ import annotations

from advisor import catalog
from advisor.memory import estimate
from advisor.memory.transformer import _target_keys, trainable_params
from advisor.models.workload import Workload
from advisor.parse import canonical_query, parse_query

ALL = ("q", "k", "v", "o", "gate", "up", "down")


def test_linear_layers_with_no_projection_named_are_every_projection():
    assert (
        _target_keys("language model linear layers; projector trained; vision tower frozen") == ALL
    )
    assert _target_keys("language model linear layers (attention and mlp); audio tower off") == ALL
    assert _target_keys("attention and mlp linear layers of the dit") == ALL


def test_named_projections_keep_their_reading():
    assert _target_keys("q_proj, v_proj") == ("q", "v")
    assert _target_keys("to_q,to_k,to_v,to_out.0,linear_in,linear_out")[:4] == ("q", "k", "v", "o")
    assert _target_keys("mlp") == ("gate", "up", "down")
    assert _target_keys("") == ("q", "v")  # PEFT's default for Llama-style models


def test_rank_128_on_every_mistral_projection_is_peft_s_count():
    spec = catalog.find_model("mistral-7b")
    assert spec is not None and spec.arch is not None
    w = Workload(
        model=spec.id, mode="lora", lora_rank=128, lora_targets="language model linear layers"
    )
    # per layer 128 x (q 4096+4096, k and v 4096+1024, o 4096+4096, gate/up/down 4096+14336)
    per_layer = 128 * (8192 + 5120 + 5120 + 8192 + 3 * 18432)
    assert trainable_params(w, spec.arch, 7.24e9) == per_layer * spec.arch.layers


# --- the same targets read from a question (advisor/parse/training_knobs.py) ----------------


def _targets(question: str) -> str | None:
    parsed = parse_query(question)
    assert parsed.workload is not None
    return parsed.workload.lora_targets


def test_a_question_names_every_linear_in_its_trainers_words():
    assert _targets("qwen2.5-7b lora r64 all-linear 4090") == "all-linear"
    assert _targets("qwen2.5-7b lora 所有线性层 4090") == "all-linear"
    assert _targets("llama-factory qwen2.5-7b lora_target all 4090") == "all-linear"
    assert _targets("qwen2.5-7b lora 4090") is None  # the stack's own default then


def test_a_question_lists_its_projections():
    assert _targets("qwen2.5-7b lora target_modules q_proj,v_proj 4090") == "q_proj,v_proj"
    told = _targets("qwen2.5-7b lora on q_proj k_proj v_proj o_proj rank 16 4090")
    assert told == "q_proj,k_proj,v_proj,o_proj"
    assert (
        parse_query("qwen2.5-7b lora on q_proj k_proj v_proj o_proj rank 16").workload.lora_rank
        == 16
    )  # type: ignore[union-attr]


def test_the_canonical_line_keeps_the_targets_and_the_estimate_follows_them():
    parsed = parse_query("qwen2.5-7b lora r16 all-linear 4090")
    again = parse_query(canonical_query(parsed))
    assert again.workload is not None and again.workload.lora_targets == "all-linear"
    grads = []
    for told in ("all-linear", "q_proj,v_proj"):
        w = parse_query(f"qwen2.5-7b lora r16 {told}").workload
        assert w is not None
        est = estimate(w).estimate
        assert est is not None
        grads.append(next(t.bytes for t in est.terms if t.name == "gradients"))
    assert grads[0] > 4 * grads[1]
