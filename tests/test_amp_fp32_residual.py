"""Mixed precision by autocast over fp32 weights (data/training_stacks.toml
[amp_fp32_weights]): the embedding is not an op autocast casts and the residual add
promotes to the wider dtype, so the residual stream, and the input a checkpointed layer
keeps, is fp32 (4 B a value). Where nothing casts the parameters under FSDP (ATorch's
amp_native wraps the forward in autocast, its FSDP strategy has no MixedPrecision), FSDP
also gathers each unit in fp32. The rule is pinned to those sources, not to a measurement."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.stacks import amp_fp32_weights, autocast_over_fp32
from advisor.models.choices import Parallelism
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.render import assumption
from checks.cases import stack

LAYERS, HIDDEN, TOKENS = 32, 4096, 4 * 4096  # Llama-2-7B, batch 4 x 4096


def _run(**extra: object):
    base: dict = dict(
        model="llama-2-7b",
        mode="lora",
        weights_format="fp32",
        mixed_precision=True,
        batch_size=4,
        seq_len=4096,
        gradient_checkpointing=True,
    )
    return estimate(Workload(**{**base, **extra}))


def _term(r, name: str):
    return next(t for t in r.estimate.terms if t.name == name)


def _assumed(r) -> dict:
    return {a.field: a.value for a in r.assumed}


def test_the_source_figures_are_what_the_rule_reads():
    row = amp_fp32_weights()
    assert row["checkpoint_bytes"] == 4  # fp32 residual stream
    assert row["gather_bits"] == 32  # FSDP's flat parameter in its own dtype
    assert row["autocast_fsdp"] == ["atorch"]
    assert "amp.rst" in row["source"] and "amp_optimization.py" in row["source"]
    assert "2026-12-07" in row["source"]


def test_who_runs_autocast_over_the_fp32_parameters():
    assert autocast_over_fp32("fp32", "bf16", Parallelism.none, None)
    assert autocast_over_fp32("fp32", "fp16", Parallelism.ddp, "transformers")
    assert autocast_over_fp32("fp32", "bf16", Parallelism.fsdp, "atorch")
    # accelerate's FSDP casts the parameters (MixedPrecision param_dtype), DeepSpeed the module
    assert not autocast_over_fp32("fp32", "bf16", Parallelism.fsdp, "trl")
    assert not autocast_over_fp32("fp32", "bf16", Parallelism.zero3, None)
    assert not autocast_over_fp32("bf16", "bf16", Parallelism.none, None)  # 16-bit weights
    assert not autocast_over_fp32("fp32", "fp32", Parallelism.none, None)  # no autocast


def test_one_card_checkpoints_the_fp32_residual_stream_and_says_so():
    """One card against accelerate's FSDP (parameters cast to bf16, the stream averaged at
    2.5 B): the activations differ by the checkpoints' 4 - 2.5 B a value, no more."""
    one = _run()
    fsdp = _run(num_gpus=8, parallelism="fsdp", framework="trl")
    assert _assumed(one)["activation_dtype"] == "fp32_residual_amp"
    assert "activation_dtype" not in _assumed(fsdp)
    gap = _term(one, "activations").bytes - _term(fsdp, "activations").bytes
    expected = LAYERS * TOKENS * HIDDEN * (4 - 2.5)
    assert abs(gap - expected) < 0.001 * expected


def test_atorch_fsdp_gathers_fp32_layers():
    """ATorch: autocast alone, so FSDP gathers the fp32 flat parameters (two layers in
    flight) and the checkpoints are fp32; accelerate's FSDP gathers them at 16 bits."""
    atorch = _run(num_gpus=8, parallelism="fsdp", framework="atorch")
    trl = _run(num_gpus=8, parallelism="fsdp", framework="trl")
    assert _term(atorch, "gathered_layers").values["bits"] == 32
    assert _term(trl, "gathered_layers").values["bits"] == 16
    assert _term(atorch, "gathered_layers").bytes == 2 * _term(trl, "gathered_layers").bytes
    assert _assumed(atorch)["activation_dtype"] == "fp32_residual_amp"


def test_atorch_is_read_from_a_question_and_from_a_case_alike():
    q = parse_query("atorch fsdp lora llama-2-7b fp32 amp 8x a100 80g batch 4 seq 4096")
    assert q.workload is not None and q.workload.framework == "atorch"
    assert q.workload.weights_format == "fp32" and q.workload.mixed_precision
    framework = (
        "ATorch auto_accelerate over transformers LlamaForCausalLM (PyTorch FSDP) + peft LoRA"
    )
    assert stack(framework) == "atorch"


def test_the_assumption_is_said_in_both_languages():
    en = assumption("en", "activation_dtype", "fp32_residual_amp")
    zh = assumption("zh", "activation_dtype", "fp32_residual_amp")
    assert "fp32" in en and "autocast" in en and "residual" in en
    assert "fp32" in zh and "autocast" in zh and "激活" in zh
    assert "fp32_residual_amp" not in en + zh
