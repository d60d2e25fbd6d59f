"""A LoRA target list said in words: "the language model's linear layers" with no projection
named adapts every Linear, as the trainers that say so do (PEFT target_modules="all-linear",
InternVL's wrap_llm_lora, VideoLLaMA2's find_all_linear_names); named projections keep
their own reading."""

from __future__ import annotations

from advisor import catalog
from advisor.memory.transformer import _target_keys, trainable_params
from advisor.models.workload import Workload

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
