"""The sharding stacks' own terms in a training breakdown: DeepSpeed ZeRO's buckets, fp32
gradient buffers and retained parameters, FSDP2's whole blocks and pipeline-stage
gradient accumulators. The figures come from advisor/memory/distributed.py (data:
advisor/data/distributed.toml); this module adds them to a training estimate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor import catalog
from advisor.memory import distributed, quantizers, stacks
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import embedding_params
from advisor.models.choices import Offload, Parallelism

if TYPE_CHECKING:
    from advisor.memory.training_setup import TrainingSetup

# DeepSpeed's bf16/fp16 ZeRO optimizer gives its fp32 master partition an fp32 gradient
# only during the step: ZeRO-1/2 for the whole partition (stage_1_and_2.py step():
# single_partition_of_fp32_groups[i].grad is set, stepped, then None), ZeRO-3 one
# sub-group at a time (stage3.py _prepare_fp32_grad_for_sub_group flattens the sub-group's
# gradients to fp32, _release_sub_group sets .grad = None; the init-time gradient_buffer is
# replaced at the first step).
DEEPSPEED_ZERO = {Parallelism.zero1, Parallelism.zero2, Parallelism.zero3}
DEEPSPEED_FP32_GRAD_BYTES = 4


def add_deepspeed_comm_buffers(
    acc: Breakdown, par: Parallelism, trainable: float, hidden: int, framework: str | None
) -> int:
    """The 16-bit buckets of the stack's ZeRO config (data/distributed.toml): with
    overlap_comm, "4.5x the allgather_bucket_size and reduce_bucket_size values" (DeepSpeed
    config docs); without, one reduce buffer; ZeRO-3: the reduce buffer and the prefetch
    bucket, "auto" being hidden^2 and 0.9 x hidden^2."""
    elements, factor, overlap = distributed.zero_bucket_elements(framework, par, hidden, trainable)
    if par != Parallelism.zero3:
        bucket, buffers = distributed.zero12_ipg_elements(framework, par, hidden)
        if buffers * bucket > factor * elements:
            return _add_ipg_buffers(acc, bucket, buffers)
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("comm_buffers", factor * elements * 2, "")
    return acc.add(
        "comm_buffers",
        factor * elements * 2,
        f"DeepSpeed buckets{' (overlap_comm)' if overlap else ''}: {factor:g} x {elements / 1e6:.0f}M elements x 2 B",
        elements_m=round(elements / 1e6),
        factor=factor,
    )


def _add_ipg_buffers(acc: Breakdown, bucket: float, buffers: int) -> int:
    """ZeRO-1/2's gradient buckets, allocated whole at reduce_bucket_size at every backward
    however few parameters train (a LoRA): more than the 4.5x rule bounded by the trained
    parameters (data/distributed.toml [deepspeed] ipg_buffers)."""
    if acc.lean:
        return acc.add("comm_buffers", buffers * bucket * 2, "")
    return acc.add(
        "comm_buffers",
        buffers * bucket * 2,
        f"DeepSpeed gradient buckets: {buffers} x {bucket / 1e6:.0f}M elements x 2 B"
        " (reduce_bucket_size, allocated whatever trains)",
        key="comm_buffers.ipg",
        buffers=buffers,
        elements_m=round(bucket / 1e6),
    )


def fsdp2(par: Parallelism, framework: str | None) -> bool:
    """FSDP applied as torchtitan applies FSDP2 (data/distributed.toml: fsdp2.stacks)."""
    return par == Parallelism.fsdp and distributed.fsdp2_stack(framework)


def add_gathered(t: TrainingSetup, acc: Breakdown) -> int:
    """Whole 16-bit parameters on each card while the loss runs. ZeRO-3: the lm_head and
    the trailing blocks within stage3_max_reuse_distance (released only when not reused
    soon; partitioned_param_coordinator.py). torchtitan's FSDP2: two blocks (one in flight,
    one prefetched) and the [norm, lm_head] unit, never resharded after forward. Other
    FSDP wrappers: about two layers in flight."""
    arch, tp = t.arch, t.tp
    gather_bits = min(catalog.find_format(t.fmt).bits, 16)  # type: ignore[union-attr]
    emb = embedding_params(arch)
    layer_params = (t.params - emb) / arch.layers
    if t.par == Parallelism.zero3:
        held = distributed.zero3_retained_params(t.framework, arch, t.params, emb)
        if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
            return acc.add("gathered_layers", held * gather_bits / 8 / tp, "")
        return acc.add(
            "gathered_layers",
            held * gather_bits / 8 / tp,
            f"ZeRO-3: lm_head + trailing blocks kept gathered for reuse, {held / 1e6:.0f}M params at {gather_bits:g} bits",
            key="gathered_layers.zero3",
            params_m=round(held / 1e6),
            bits=gather_bits,
        )
    if distributed.fsdp2_stack(t.framework):
        count = distributed.fsdp2_blocks_unsharded(t.layers, t.pp)
        blocks = count * layer_params * gather_bits / 8 / tp
        head = distributed.fsdp2_lm_head_bytes(arch, tp)
        return acc.add(
            "gathered_layers",
            blocks + head,
            f"FSDP2: {count} blocks at {gather_bits:g} bits + lm_head unit kept unsharded",
            key="gathered_layers.fsdp2",
            blocks=count,
            bits=gather_bits,
        )
    if stacks.autocast_over_fp32(t.fmt, t.compute, t.par, t.framework):
        # no MixedPrecision param_dtype: the flat parameter is gathered in its fp32
        # (data/training_stacks.toml [amp_fp32_weights]), as the root unit is
        gather_bits = stacks.amp_fp32_weights()["gather_bits"]
    b = acc.add(
        "gathered_layers",
        2 * layer_params * gather_bits / 8 / tp,
        f"ZeRO-3/FSDP all-gather: ~2 layers at {gather_bits:g} bits",
        bits=gather_bits,
    )
    return b + add_fsdp1_root(t, acc, emb)


def add_fsdp1_root(t: TrainingSetup, acc: Breakdown, emb: float) -> int:
    """FSDP1's root unit (what no transformer block holds: embeddings, final norm, lm_head)
    gathered whole through forward and backward (distributed.fsdp1_root_unsharded). The
    weights term already holds its shard on the card (none when the parameters are
    offloaded to the CPU); they stay 16-bit under a quantized base (bitsandbytes leaves
    embeddings and lm_head alone)."""
    if (
        t.par != Parallelism.fsdp
        or t.split <= 1
        or not distributed.fsdp1_root_unsharded(t.framework)
    ):
        return 0
    offloaded = t.w.cpu_offload == Offload.params
    # gathered in the flat parameter's dtype: fp32 weights stay fp32 only without a
    # MixedPrecision param_dtype (fp32 compute, or a stack that mixes by autocast alone);
    # accelerate's FSDP gathers them in bf16 / fp16, as the blocks (add_gathered)
    fp32_gather = t.fmt == "fp32" and (
        t.compute == "fp32" or stacks.autocast_over_fp32(t.fmt, t.compute, t.par, t.framework)
    )
    whole = emb * (4 if fp32_gather else 2) / t.tp
    extra = whole if offloaded else whole * (1 - 1 / t.split)
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("fsdp_root_unit", extra, "")
    return acc.add(
        "fsdp_root_unit",
        extra,
        f"FSDP root unit (embeddings + lm_head, {emb / 1e6:.0f}M params) kept whole from forward through backward",
        params_m=round(emb / 1e6),
    )


def add_bnb_quant_state(t: TrainingSetup, acc: Breakdown) -> int:
    """A bitsandbytes 4-bit base's QuantState (absmax statistics) whole on every card where
    FSDP or ZeRO-3 shard or offload the parameters (they manage parameters only;
    data/quantizers.toml [bitsandbytes_4bit_sharded]). The weights term holds its shard;
    with the parameters offloaded it holds none, and the statistics stay on the card."""
    offloaded = t.w.cpu_offload == Offload.params
    if t.par not in (Parallelism.fsdp, Parallelism.zero3) or (t.split <= 1 and not offloaded):
        return 0
    bits = quantizers.bnb_whole_state_bits(t.fmt, t.framework)
    if not bits:
        return 0
    quantized = max(t.params - embedding_params(t.arch), 0.0)
    whole = quantized * bits / 8 / t.tp
    extra = whole if offloaded else whole - quantized * bits / 8 / t.split
    if extra <= 0:
        return 0
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("quant_state", extra, "")
    return acc.add(
        "quant_state",
        extra,
        f"bitsandbytes 4-bit statistics ({bits:.3g} bits per weight) whole on every card",
        params_b=round(quantized / 1e9, 2),
        bits=round(bits, 3),
    )


def deepspeed_step_bytes(t: TrainingSetup, foreach: bool) -> float:
    """What DeepSpeed's step adds: it steps the torch optimizer on its fp32 partition
    (ZeRO-3 one sub-group of <= sub_group_size at a time, stage3.py step()), so a foreach
    step's extra buffer is fp32, beside that partition's fp32 gradient."""
    stepped = t.trainable / t.shard_states
    if t.par == Parallelism.zero3:
        stepped = distributed.zero3_fp32_grad_elements(t.framework, t.arch.hidden, stepped)
    return (4 * stepped if foreach else 0.0) + DEEPSPEED_FP32_GRAD_BYTES * stepped


def add_stage_grad_accumulators(t: TrainingSetup, acc: Breakdown) -> int:
    """A pipeline stage under FSDP2 keeps its gradients whole, in fp32, until the last
    micro-batch (torch.distributed.pipelining turns gradient sync off for the others)."""
    if not (t.pp > 1 and fsdp2(t.par, t.framework) and t.w.cpu_offload == Offload.none):
        return 0
    stage = t.trainable / t.pp
    return acc.add(
        "stage_grad_accumulators",
        distributed.fsdp2_stage_grad_accumulator_bytes(stage, t.tp),
        f"pipeline stage: {stage / 1e6:.0f}M params' whole gradients in fp32 until the last micro-batch",
        params_m=round(stage / 1e6),
    )
