"""QLoRA under transformers + PEFT: prepare_model_for_kbit_training casts every 16-bit
parameter that is not a 4-bit Params4bit to fp32 (norms, embeddings, LM head) and
bitsandbytes' Linear4bit returns its input's dtype, so the residual stream and the activations
a layer saves are fp32 (data/training_stacks.toml [kbit_training]). The rule is pinned to
those sources' figures: 4 B a saved value, 16-bit logits under autocast, no upcast where the
4-bit weights are sharded."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.stacks import kbit_activation_bytes, stack_defaults
from advisor.models.workload import Workload
from advisor.render import assumption

GIB = 2**30


def _qlora(framework: str, **extra: object):
    w = Workload(
        model="llama-3.1-8b",
        mode="qlora",
        weights_format="nf4",
        batch_size=1,
        seq_len=4096,
        gradient_checkpointing=True,
        framework=framework,
        **extra,
    )
    return estimate(w)


def _term(r, name: str):
    return next(t for t in r.estimate.terms if t.name == name)


def test_the_source_figures_are_what_the_rule_reads():
    row = stack_defaults()["kbit_training"]
    assert row["activation_bytes"] == 4  # fp32: 'cast all non INT8 parameters to fp32'
    assert {"transformers", "peft"} <= set(row["stacks"])
    assert "prepare_model_for_kbit_training" in row["source"] and "2026-12-07" in row["source"]
    assert kbit_activation_bytes("peft", "nf4", sharded=False) == 4.0
    assert kbit_activation_bytes("peft", "nf4", sharded=True) is None  # FSDP / ZeRO-3 QLoRA
    assert kbit_activation_bytes("torchtune", "nf4", sharded=False) is None  # torchao NF4
    assert kbit_activation_bytes("peft", "gptq-4bit", sharded=False) is None  # not upcast


def test_peft_qlora_checkpoints_fp32_layer_inputs_and_says_so():
    """The checkpoints are the layers' fp32 inputs: twice the 16-bit figure a stack without
    the upcast (LitGPT's own quantized script) keeps."""
    peft, litgpt = _qlora("peft"), _qlora("litgpt")
    assert {a.field: a.value for a in peft.assumed}["activation_dtype"] == "fp32_kbit_upcast"
    assert "activation_dtype" not in {a.field for a in litgpt.assumed}
    # 32 layer inputs x 4096 tokens x 4096 hidden: 4 B each under the upcast, 2 B without
    ckpt_16 = 32 * 4096 * 4096 * 2
    gap = _term(peft, "activations").bytes - _term(litgpt, "activations").bytes
    assert gap >= ckpt_16


def test_the_logits_stay_16_bit_under_autocast():
    """The LM head runs under bf16 autocast whatever its weight's dtype: 12 B a logit."""
    logits = _term(_qlora("peft"), "logits")
    assert logits.values["bytes_per_logit"] == 12.0


def test_sharded_qlora_keeps_16_bit_activations():
    r = _qlora("peft", num_gpus=2, parallelism="fsdp")
    assert "activation_dtype" not in {a.field for a in r.assumed}


def test_the_assumption_is_said_in_both_languages():
    en = assumption("en", "activation_dtype", "fp32_kbit_upcast")
    zh = assumption("zh", "activation_dtype", "fp32_kbit_upcast")
    assert "prepare_model_for_kbit_training" in en and "fp32" in en
    assert "prepare_model_for_kbit_training" in zh and "激活" in zh
    assert "activation_dtype" not in en + zh and "fp32_kbit_upcast" not in en + zh


def test_axolotl_casts_the_prepared_norms_back_to_16_bits():
    """axolotl's load_model converts the norms, embeddings and LM head back to the training
    dtype after prepare_model_for_kbit_training for a LoRA / QLoRA adapter: its saved
    activations are 2 B a value, half of PEFT's."""
    assert kbit_activation_bytes("axolotl", "nf4", False) is None
    peft, axolotl = _qlora("peft"), _qlora("axolotl")
    assert _term(axolotl, "activations").bytes < _term(peft, "activations").bytes
    assert "activation_dtype" not in [a.field for a in axolotl.assumed]
