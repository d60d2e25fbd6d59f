"""A bitsandbytes 4-bit base sharded or offloaded by FSDP / ZeRO-3 keeps its QuantState
statistics whole on every card: the wrappers manage parameters only, and Params4bit keeps the
absmax statistics as an attribute, stored on the module as well because "the quant state got
lost when the parameter got converted. This happens for example for fsdp" (bitsandbytes
nn/modules.py fix_4bit_weight_quant_state_from_module; data/quantizers.toml
[bitsandbytes_4bit_sharded]). Pinned to that rule and the formats' bits, not to a measured
case."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.quantizers import bnb_whole_state_bits
from advisor.memory.transformer import embedding_params
from advisor.models.workload import Workload
from advisor.render import formula


def _run(**extra: object):
    fields: dict = {
        "model": "llama-2-7b",
        "mode": "qlora",
        "weights_format": "nf4",
        "batch_size": 1,
        "seq_len": 512,
        "gradient_checkpointing": True,
        "num_gpus": 2,
        "parallelism": "fsdp",
        "framework": "peft",
    }
    return estimate(Workload(**{**fields, **extra}))


def _state(r) -> int:
    return next((t.bytes for t in r.estimate.terms if t.name == "quant_state"), 0)


def _quantized(r) -> float:
    return r.model.params_b * 1e9 - embedding_params(r.model.arch)


def test_the_statistics_are_the_formats_bits_beyond_the_4_bit_codes():
    # NF4: one fp32 absmax per 64 weights; double quantization: 8-bit codes of those and
    # an fp32 absmax per 256 of them (data/formats.toml)
    assert bnb_whole_state_bits("nf4", "peft") == 0.5
    assert abs(bnb_whole_state_bits("nf4-dq", "peft") - 0.127) < 1e-9
    assert bnb_whole_state_bits("int4", "peft") == 0.0  # not a bitsandbytes 4-bit base
    assert bnb_whole_state_bits("nf4", "torchtune") == 0.0  # torchao NF4Tensor, its own FSDP hooks


def test_sharded_over_two_cards_the_other_half_of_the_statistics_stays_beside_the_shard():
    r = _run()
    whole = _quantized(r) * 0.5 / 8
    assert abs(_state(r) - whole / 2) <= 1  # its own half is in `weights`


def test_with_the_parameters_offloaded_all_the_statistics_stay_on_the_card():
    r = _run(cpu_offload="params")
    assert abs(_state(r) - _quantized(r) * 0.5 / 8) <= 1
    dq = _run(cpu_offload="params", weights_format="nf4-dq")
    assert abs(_state(dq) - _quantized(dq) * 0.127 / 8) <= 1


def test_one_card_other_kernels_and_16_bit_bases_add_nothing():
    one = estimate(
        Workload(model="llama-2-7b", mode="qlora", weights_format="nf4", framework="peft")
    )
    assert _state(one) == 0
    assert _state(_run(framework="torchtune")) == 0
    assert _state(_run(mode="lora", weights_format="bf16")) == 0


def test_the_term_is_said_in_both_languages():
    term = next(t for t in _run().estimate.terms if t.name == "quant_state")
    en, zh = formula("en", term), formula("zh", term)
    assert "whole on every card" in en and "0.5 bits" in en
    assert "每张卡" in zh and "0.5 bit" in zh
