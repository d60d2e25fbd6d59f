"""QLoRA / 8-bit LoRA under transformers + PEFT: prepare_model_for_kbit_training casts every
fp16/bf16 parameter that is not a 4-bit Params4bit to fp32 (`param.data =
param.data.to(torch.float32)`), so the weights the quantizer left 16-bit (embeddings, the LM
head, the norms) sit on the card at 4 B each for the whole run (data/training_stacks.toml
[kbit_training] upcast_bytes). Pinned to that cast: 2 B more a kept weight than the load
dtype's 2, nothing where the stack does not call it."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.stacks import kbit_upcast_bytes, stack_defaults
from advisor.models.workload import Workload
from advisor.wording import label

# Llama-3.1-8B: vocab 128256 x hidden 4096, untied (embeddings + lm_head)
KEPT = 2 * 128256 * 4096


def _lora(framework: str, **extra: object):
    w = Workload(
        model="llama-3.1-8b",
        mode=extra.pop("mode", "qlora"),
        weights_format=extra.pop("weights_format", "nf4"),
        batch_size=1,
        seq_len=2048,
        gradient_checkpointing=True,
        framework=framework,
        **extra,
    )
    return estimate(w).estimate


def _upcast(est) -> int:
    return next((t.bytes for t in est.terms if t.name == "kbit_upcast"), 0)


def test_the_source_figure_is_what_the_rule_reads():
    row = stack_defaults()["kbit_training"]
    assert row["upcast_bytes"] == 4  # fp32
    assert "param.data.to(torch.float32)" in row["upcast_source"]
    assert "2026-12-08" in row["upcast_source"]
    assert kbit_upcast_bytes("peft", "nf4", sharded=False) == 4.0
    assert kbit_upcast_bytes("peft", "int8", sharded=False) == 4.0
    assert kbit_upcast_bytes("peft", "nf4", sharded=True) is None  # FSDP / ZeRO-3 QLoRA
    assert kbit_upcast_bytes("axolotl", "nf4", sharded=False) is None  # casts them back
    assert kbit_upcast_bytes("torchtune", "nf4", sharded=False) is None  # torchao NF4


def test_peft_qlora_holds_the_embeddings_and_lm_head_in_fp32():
    """The term is the kept weights' 2 B more each (the catalog's counts within 1%)."""
    extra = _upcast(_lora("peft"))
    assert 0.99 * KEPT * 2 <= extra <= 1.01 * KEPT * 2
    int8 = _upcast(_lora("peft", mode="lora", weights_format="int8"))
    assert abs(int8 - extra) < 2**20  # the same cast over LLM.int8() weights


def test_stacks_that_do_not_upcast_add_nothing():
    assert _upcast(_lora("litgpt")) == 0
    assert _upcast(_lora("axolotl")) == 0
    assert _upcast(_lora("peft", mode="lora", weights_format="bf16")) == 0  # nothing quantized
    assert _upcast(_lora("peft", num_gpus=2, parallelism="fsdp")) == 0  # sharded QLoRA


def test_the_term_is_named_in_both_languages():
    assert "fp32" in label("en", "term.kbit_upcast")
    assert "fp32" in label("zh", "term.kbit_upcast")


def _head_cast(est) -> int:
    return next((t.bytes for t in est.terms if t.name == "head_cast"), 0)


def test_the_upcast_lm_head_is_cast_to_16_bits_and_saved_for_backward():
    """autocast casts the frozen fp32 head afresh (no cache without requires_grad) and the
    matmul saves that 16-bit copy: vocab x hidden x 2 B beside the logits."""
    row = stack_defaults()["kbit_training"]
    assert row["head_cast_bytes"] == 2
    assert "cached_cast" in row["head_cast_source"] and "2026-12-08" in row["head_cast_source"]
    est = _lora("peft")
    head = 128256 * 4096 * 2
    assert 0.99 * head <= _head_cast(est) <= 1.01 * head
    assert _head_cast(_lora("litgpt")) == 0  # no upcast: the 16-bit head is used as it is
    assert _head_cast(_lora("peft", liger_kernel=True)) == 0  # the fused loss takes the weight
    assert "fp32" in label("en", "term.head_cast") and "fp32" in label("zh", "term.head_cast")
