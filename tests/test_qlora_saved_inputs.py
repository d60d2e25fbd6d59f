"""QLoRA through bitsandbytes before 0.43.2: each frozen 4-bit projection keeps its input
for backward (MatMul4Bit ctx.tensors = (A, B)); data/quantizers.toml
[bitsandbytes_4bit_training], measured by calibration/lora_saved_cpu.py. A fit check: the rule
against the measurement it was read from, not a measure of accuracy."""

from __future__ import annotations

import json
from pathlib import Path

from advisor.memory import estimate, quantizers
from advisor.models.workload import Workload

CPU_RECORD = Path(__file__).resolve().parent.parent / "calibration" / "data" / "lora_saved_cpu.json"


def _activations(framework: str, gc: bool = False) -> int:
    w = Workload(
        model="llama-2-7b",
        mode="qlora",
        weights_format="nf4",
        batch_size=2,
        seq_len=512,
        gradient_checkpointing=gc,
        framework=framework,
    )
    return next(t.bytes for t in estimate(w).estimate.terms if t.name == "activations")


def test_the_rule_is_what_the_cpu_measurement_found():
    """legacy QLoRA - LoRA saved bytes per token-layer = 2 B x (2 x hidden + intermediate)
    at the measured block's own sizes."""
    rec = json.loads(CPU_RECORD.read_text())
    saved, setup = rec["saved_bytes_per_token_layer"], rec["setup"]
    row = quantizers._table()["bitsandbytes_4bit_training"]
    rule = 2 * (row["hidden_inputs"] * setup["hidden"] + row["mlp_inputs"] * setup["intermediate"])
    assert saved["qlora_legacy"] - saved["lora"] == rule
    assert saved["qlora"] == saved["lora"]  # the 0.43.2 fix keeps nothing more than LoRA


def test_litgpt_qlora_keeps_the_4bit_layers_inputs_for_every_layer():
    """LitGPT pins bitsandbytes 0.42.0; torchtune's NF4 (torchao) does not keep them.
    Llama-2-7B, 2 x 512 tokens, no checkpointing: 32 layers x 1024 tokens x 2 B x
    (2 x 4096 + 11008)."""
    extra = _activations("litgpt") - _activations("torchtune")
    assert abs(extra - 32 * 1024 * 2 * (2 * 4096 + 11008)) < 1e6


def test_with_checkpointing_only_the_recomputed_layer_keeps_them():
    extra = _activations("litgpt", gc=True) - _activations("torchtune", gc=True)
    assert 0 < extra <= 1024 * 2 * (2 * 4096 + 11008) + 1e6


def test_an_unknown_stack_is_assumed_to_run_the_older_bitsandbytes():
    assert quantizers.bnb_legacy_saves_inputs("nf4", None)
    assert quantizers.bnb_legacy_saves_inputs("nf4", "litgpt")
    assert not quantizers.bnb_legacy_saves_inputs("nf4", "unsloth")
    assert not quantizers.bnb_legacy_saves_inputs("bf16", None)
    w = Workload(model="llama-2-7b", mode="qlora", seq_len=512)
    assumed = {a.field: a.value for a in estimate(w).assumed}
    assert assumed["qlora_kernel"] == "bnb_keeps_inputs"
