"""QLoRA of a 7B on an 8 GB card: what the figure is made of, and
the change people make."""

from __future__ import annotations

from advisor.memory import GIB, estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend_query


def test_hf_loss_keeps_the_whole_fp32_logits_tensor_at_12_bytes_a_logit() -> None:
    """transformers' ForCausalLMLoss upcasts all [tokens, vocab] logits (`logits.float()`),
    and the log-softmax backward holds its saved output, nll's gradient and its own: 12 B.
    The generic 7B is Llama-3-like (128k vocabulary): 2048 x 128256 x 12 B = 2.9 GiB."""
    e = estimate(Workload(params_b=7, mode="qlora", weights_format="nf4")).estimate
    logits = next(t for t in e.terms if t.name == "logits")
    assert logits.values["bytes_per_logit"] == 12.0
    assert abs(logits.bytes - 2048 * 128256 * 12) < 0.01 * logits.bytes  # rebalanced to the peak


def test_a_32k_vocabulary_7b_is_about_7_gib_and_unsloth_drops_the_logits() -> None:
    mistral = estimate(Workload(model="mistral-7b", mode="qlora", weights_format="nf4"))
    assert mistral.estimate is not None and mistral.estimate.total_bytes < 7.6 * GIB
    uns = estimate(Workload(params_b=7, mode="qlora", weights_format="nf4", framework="unsloth"))
    assert uns.estimate is not None and "logits" not in uns.estimate.breakdown
    assert 6.0 * GIB < uns.estimate.total_bytes < 7.6 * GIB


def test_qlora_7b_on_8gb_is_told_to_run_it_under_unsloth_not_to_stream_weights() -> None:
    """Before: the first change was FSDP with parameters offloaded to the CPU (every step
    streams the weights). Unsloth runs the same QLoRA at full speed and fits, tight."""
    rec = recommend_query(parse_query("qlora 7b on 8gb"))
    assert rec.verdict is not None and rec.verdict.state == "no_fit"
    assert rec.verdict.fix == "unsloth" and rec.verdict.fix_tight
    assert rec.fixes.index("unsloth") < rec.fixes.index("offload_params")
