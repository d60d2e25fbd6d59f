"""Per-GPU memory of sharded training and fused kernels, as the stacks' code allocates it
(advisor/memory/distributed.py, data/distributed.toml)."""

from __future__ import annotations

from advisor.memory import GIB, estimate
from advisor.memory.distributed import (
    liger_loss_bytes,
    selective_saved_bytes_per_token,
    sequence_parallel_extra_per_token,
    zero3_retained_params,
    zero_bucket_elements,
    zero_config,
)
from advisor.memory.transformer import activation_bytes_per_token_layer
from advisor.models.choices import Attention, Parallelism
from advisor.models.workload import Workload


def _terms(w: Workload) -> dict[str, int]:
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.bytes for t in est.terms}


def _formulas(w: Workload) -> dict[str, str]:
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.formula for t in est.terms}


def _llama8b():
    return estimate(Workload(model="llama-3.1-8b", mode="full")).model.arch


# --- DeepSpeed ZeRO ------------------------------------------------------------------------


def test_hf_auto_fills_zero3_buckets_from_the_hidden_size():
    cfg = zero_config("llama-factory", Parallelism.zero3, 4096)
    assert cfg["reduce_bucket_size"] == 4096 * 4096
    assert cfg["prefetch_bucket_size"] == 0.9 * 4096 * 4096
    assert cfg["overlap_comm"] == 0  # LLaMA-Factory's ds_z3_config.json turns it off


def test_shipped_zero2_configs_without_overlap_keep_one_reduce_buffer():
    swift, factor, overlap = zero_bucket_elements("ms-swift", Parallelism.zero2, 4096, 8e9)
    assert (swift, factor, overlap) == (2e8, 1.0, False)
    lf, _, _ = zero_bucket_elements("llama-factory", Parallelism.zero2, 4096, 8e9)
    assert lf == 5e8
    # The HF docs' sample config overlaps: 4.5 x (allgather + reduce), DeepSpeed docs.
    default, factor, overlap = zero_bucket_elements(None, Parallelism.zero2, 4096, 8e9)
    assert (default, factor, overlap) == (4e8, 4.5, True)


def test_zero2_buckets_under_ms_swift_are_smaller_than_under_the_docs_sample():
    common = dict(model="qwen2.5-7b", mode="full", num_gpus=4, parallelism="zero2")
    swift = _terms(Workload(framework="ms-swift", **common))["comm_buffers"]
    sample = _terms(Workload(**common))["comm_buffers"]
    assert swift / GIB < 0.5 < 2.5 < sample / GIB


def test_zero3_keeps_the_large_qwen_lm_head_gathered_at_the_loss():
    w = Workload(model="qwen2.5-7b", mode="lora", num_gpus=4, parallelism="zero3")
    arch = estimate(w).model.arch
    held = zero3_retained_params(None, arch, 7.62e9, arch.vocab * arch.hidden * 2)
    assert held >= arch.vocab * arch.hidden  # 152k x 3584 = 545M, always kept
    assert _formulas(w)["gathered_layers"].startswith("ZeRO-3: lm_head")
    assert _terms(w)["gathered_layers"] >= arch.vocab * arch.hidden * 2


def test_zero3_on_one_gpu_still_gathers_into_full_buffers():
    w = Workload(model="qwen2.5-1.5b", mode="full", num_gpus=1, parallelism="zero3")
    assert _terms(w).get("gathered_layers", 0) > 0


def test_zero_fp32_gradient_exists_only_at_the_step():
    """stage_1_and_2.py sets the fp32 partition's .grad in step() and drops it after;
    stage3.py does the same one sub-group at a time."""
    common = dict(model="llama-3.1-8b", mode="full", num_gpus=16, seq_len=512)
    for stage in ("zero2", "zero3"):
        est = estimate(Workload(parallelism=stage, **common)).estimate
        assert est is not None
        opt = next(t for t in est.terms if t.name == "optimizer")
        assert opt.values["bytes_per_param"] == 12  # master + two moments, no fp32 gradient


def test_zero3_steps_one_sub_group_at_a_time():
    """A 7.6e9 partition on one GPU: the step's fp32 gradient and foreach buffer cover
    sub_group_size (1e9) elements, not the whole partition."""
    base = dict(model="qwen2.5-7b", mode="full", parallelism="zero3", seq_len=128)
    one = estimate(Workload(num_gpus=1, **base)).estimate
    assert one is not None
    step = next(t for t in one.terms if t.name == "optimizer_step")
    assert step.values["params_m"] > 7000
    # 8 B x 1e9 at most (rebalancing may show less of it at the peak)
    assert 3e9 < step.bytes <= 8 * 1e9 * 1.01


# --- FSDP2 / torchtitan --------------------------------------------------------------------


def test_torchtitan_sac_keeps_input_odd_matmuls_and_attention_output():
    arch = _llama8b()
    h, kv, inter = arch.hidden, arch.kv_heads_ * arch.head_dim_, arch.intermediate_
    # input + wq + wv + w1 + w2 + attention output, 16-bit
    assert selective_saved_bytes_per_token(arch, 2) == 2 * (h + h + kv + inter + h + h)
    full = activation_bytes_per_token_layer(arch, 8192, Attention.flash, 2, False)
    assert 0.25 < selective_saved_bytes_per_token(arch, 2) / full < 0.4


def test_selective_checkpointing_saves_more_than_the_old_half_rule():
    common = dict(model="llama-3.1-8b", mode="full", num_gpus=8, parallelism="fsdp")
    common.update(framework="torchtitan", batch_size=2, seq_len=8192)
    sac = _terms(Workload(gradient_checkpointing=True, selective_checkpointing=True, **common))
    none = _terms(Workload(gradient_checkpointing=False, **common))
    assert sac["activations"] < 0.45 * none["activations"]


def test_torchtitan_fsdp2_holds_the_lm_head_unit_unsharded():
    common = dict(model="llama-3.1-8b", mode="full", num_gpus=64, parallelism="fsdp")
    titan = _terms(Workload(framework="torchtitan", **common))
    other = _terms(Workload(**common))
    arch = _llama8b()
    added = titan["gathered_layers"] - other["gathered_layers"]
    assert abs(added - arch.vocab * arch.hidden * 2) < 1e6


# --- Liger kernels -------------------------------------------------------------------------


def test_liger_never_materializes_the_full_logits():
    common = dict(model="qwen2.5-7b", mode="lora", batch_size=4, seq_len=4096)
    plain = _terms(Workload(**common))
    liger = _terms(Workload(liger_kernel=True, **common))
    assert liger["logits"] < plain["logits"] / 10
    assert "Liger" in _formulas(Workload(liger_kernel=True, **common))["logits"]


def test_liger_full_finetune_counts_the_lm_head_gradient_filled_in_forward():
    arch = _llama8b()
    frozen = liger_loss_bytes(arch, 8192, False, 2)
    trained = liger_loss_bytes(arch, 8192, True, 2)
    assert trained - frozen == arch.vocab * arch.hidden * 2


def test_liger_rmsnorm_and_swiglu_save_less_activation():
    common = dict(model="llama-3.1-8b", mode="lora", batch_size=2, seq_len=4096)
    common.update(gradient_checkpointing=False)
    plain = _terms(Workload(**common))["activations"]
    liger = _terms(Workload(liger_kernel=True, **common))["activations"]
    assert 0.6 * plain < liger < 0.8 * plain


def test_adapter_reads_liger_from_the_notes():
    import re

    from checks.note_knobs import NOTE_KNOBS

    pattern = next(p for p, field, _ in NOTE_KNOBS if field == "liger_kernel")
    assert re.search(pattern, "trained with use_liger_kernel=True")
    assert re.search(pattern, "LLaMA-Factory enable_liger_kernel: true")
    assert not re.search(pattern, "no liger kernel")


# --- pipeline parallelism --------------------------------------------------------------------


def test_pipeline_last_stage_computes_the_loss_one_micro_batch_at_a_time():
    def loss_tokens(**kw) -> int:
        w = Workload(model="llama-3.1-70b", mode="full", batch_size=8, seq_len=8192, **kw)
        est = estimate(w).estimate
        assert est is not None
        return next(t for t in est.terms if t.name == "logits").values["tokens"]

    assert loss_tokens(num_gpus=8, parallelism="fsdp") == 8 * 8192
    assert loss_tokens(num_gpus=8, parallelism="pp") == 8192


def test_torchtitan_pipeline_keeps_the_stage_blocks_whole_and_fp32_grad_accumulators():
    common = dict(model="llama-3.1-70b", mode="full", batch_size=8, seq_len=4096)
    common.update(framework="torchtitan", parallelism="fsdp", num_gpus=64)
    flat = estimate(Workload(**common)).estimate
    staged = estimate(Workload(pipeline_parallel=8, **common)).estimate
    assert flat is not None and staged is not None
    acc = next(t for t in staged.terms if t.name == "stage_grad_accumulators")
    assert abs(acc.values["params_m"] - 70.6e9 / 8 / 1e6) < 20
    assert "stage_grad_accumulators" not in {t.name for t in flat.terms}
    blocks = next(t for t in staged.terms if t.name == "gathered_layers").values["blocks"]
    assert blocks == 10  # every block of the stage, against 2 in flight without a pipeline
    assert next(t for t in flat.terms if t.name == "gathered_layers").values["blocks"] == 2


def test_torchtitan_sequence_parallel_keeps_gathered_linear_inputs_whole():
    per_block, before_loss = sequence_parallel_extra_per_token(8192, 2, 8)
    assert per_block == 2 * 8192 * 2 * 7 / 8  # attention and feed-forward inputs
    assert before_loss == 8192 * 2 * 7 / 8  # the final norm's output for the lm_head
    common = dict(model="llama-3.1-70b", mode="full", batch_size=4, seq_len=8192)
    common.update(parallelism="fsdp", num_gpus=64, tensor_parallel=8)
    titan = _terms(Workload(framework="torchtitan", **common))["activations"]
    other = _terms(Workload(**common))["activations"]
    assert titan > other


def test_a_typed_torchtitan_question_reaches_the_fsdp2_terms():
    from advisor.parse import parse_query

    w = parse_query("torchtitan llama-3.1-8b 全参 fsdp 8卡 seq 8192").workload
    assert w.framework == "torchtitan"
    assert _formulas(w)["gathered_layers"].startswith("FSDP2")


def test_a_typed_llama_factory_zero2_question_uses_its_shipped_buckets():
    from advisor.parse import parse_query

    w = parse_query("llama-factory qwen2.5-7b full deepspeed zero2 4卡").workload
    assert w.framework == "llama-factory"
    assert "overlap_comm" not in _formulas(w)["comm_buffers"]


def test_zero_keeps_fp32_master_partitions_even_for_a_pure_bf16_run():
    """DeepSpeed copies each 16-bit partition to fp32 and steps that copy: a run asked as
    pure bf16 (mixed_precision false) still pays the master weights and fp32 moments."""
    base = dict(model="qwen2.5-7b", mode="full", weights_format="bf16", num_gpus=4)
    zero = estimate(Workload(**base, parallelism="zero3", mixed_precision=False)).estimate
    fsdp = estimate(Workload(**base, parallelism="fsdp", mixed_precision=False)).estimate
    assert zero is not None and fsdp is not None
    zero_opt = next(t for t in zero.terms if t.name == "optimizer")
    fsdp_opt = next(t for t in fsdp.terms if t.name == "optimizer")
    # fp32 moments + fp32 master (12 B) against bf16 moments (4 B), both over 4 cards
    assert zero_opt.bytes > 2.5 * fsdp_opt.bytes
    assert "fp32 master" in zero_opt.formula
