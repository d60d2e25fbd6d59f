"""What sharded training keeps per GPU beyond the divided states, and what fused kernels
save, as the stacks' own code allocates it (DeepSpeed ZeRO, torchtitan's FSDP2, Liger).

Every constant is in advisor/data/distributed.toml with the file and commit it was read
from; this module is the arithmetic.
"""

from __future__ import annotations

import math
import tomllib
from functools import cache, lru_cache

from advisor.catalog import DATA_DIR
from advisor.memory.transformer import mlp_width
from advisor.models.architecture import Architecture
from advisor.models.choices import Parallelism


@cache
def _data() -> dict:
    with (DATA_DIR / "distributed.toml").open("rb") as fh:
        return tomllib.load(fh)


@lru_cache(maxsize=256)  # a few stacks x stages x widths; each ZeRO estimate asks 2-3 times
def zero_config(framework: str | None, stage: Parallelism, hidden: int) -> dict[str, float]:
    """The stack's shipped ZeRO settings with HF's "auto" filled in: reduce_bucket_size =
    hidden^2, stage3_prefetch_bucket_size = 0.9 x hidden^2 (transformers
    integrations/deepspeed.py). Shared: read only."""
    stacks = _data()["deepspeed"]["stacks"]
    key = "zero3" if stage == Parallelism.zero3 else "zero2"
    raw = dict(stacks.get(framework or "", stacks["default"])[key])
    auto = {"reduce_bucket_size": hidden * hidden, "prefetch_bucket_size": 0.9 * hidden * hidden}
    return {k: float(auto[k] if v == "auto" else v) for k, v in raw.items()}


def zero_bucket_elements(
    framework: str | None, stage: Parallelism, hidden: int, trainable: float
) -> tuple[float, float, bool]:
    """(bucket elements, factor, overlap_comm): the 16-bit communication buffers one GPU
    holds. ZeRO-1/2 with overlap_comm: 4.5 x (allgather + reduce bucket) (DeepSpeed docs);
    without: one reduce (ipg) buffer (stage_1_and_2.py). ZeRO-3: one ipg buffer of
    reduce_bucket_size (stage3.py, contiguous_gradients) and the prefetch bucket in flight
    (partitioned_param_coordinator.py). A bucket never exceeds what is trained/gathered."""
    cfg = zero_config(framework, stage, hidden)
    overlap = bool(cfg["overlap_comm"])
    if stage == Parallelism.zero3:
        return min(cfg["reduce_bucket_size"], trainable) + cfg["prefetch_bucket_size"], 1.0, overlap
    if overlap:
        buckets = min(cfg["allgather_bucket_size"], trainable) + min(
            cfg["reduce_bucket_size"], trainable
        )
        return buckets, float(_data()["deepspeed"]["overlap_comm_factor"]), overlap
    return min(cfg["reduce_bucket_size"], trainable), 1.0, overlap


def zero12_ipg_elements(
    framework: str | None, stage: Parallelism, hidden: int
) -> tuple[float, int]:
    """(reduce_bucket_size, buffers): the gradient (ipg) buckets ZeRO-1/2 allocate at every
    backward whatever trains, two with overlap_comm, one without
    (data/distributed.toml [deepspeed] ipg_buffers: stage_1_and_2.py backward())."""
    cfg = zero_config(framework, stage, hidden)
    counts = _data()["deepspeed"]["ipg_buffers"]
    return cfg["reduce_bucket_size"], int(
        counts["overlap" if cfg["overlap_comm"] else "no_overlap"]
    )


def zero3_retained_params(
    framework: str | None, arch: Architecture, params: float, embed_params: float
) -> float:
    """Parameters ZeRO-3 holds gathered when the loss runs. After a module's forward,
    __params_to_release keeps every parameter used again within stage3_max_reuse_distance
    parameters of the trace; the trace continues into backward in reverse, so a parameter
    with A parameters after it in the forward is next used ~2A later. The lm_head (last
    forward, first backward) always stays, and trailing blocks up to reuse/2 - lm_head."""
    reuse = zero_config(framework, Parallelism.zero3, arch.hidden)["max_reuse_distance"]
    lm_head = arch.vocab * arch.hidden
    blocks = max(params - embed_params, 0.0)
    return lm_head + min(max(reuse / 2 - lm_head, 0.0), blocks)


def zero3_fp32_grad_elements(framework: str | None, hidden: int, partition: float) -> float:
    """Elements ZeRO-3 steps at once: one optimizer sub-group, at most sub_group_size
    (stage3.py _create_fp16_sub_groups; step() prepares, steps and releases each in turn)."""
    return min(zero_config(framework, Parallelism.zero3, hidden)["sub_group_size"], partition)


def fsdp2_stack(framework: str | None) -> bool:
    """Stacks that shard with FSDP2 as torchtitan does (data: fsdp2.stacks)."""
    return (framework or "") in _data()["fsdp2"]["stacks"]


def fsdp1_root_unsharded(framework: str | None) -> bool:
    """Whether the stack's FSDP keeps its root unit (embeddings, final norm, lm_head) whole
    from the forward through the backward (data: fsdp1)."""
    row = _data()["fsdp1"]
    return bool(row["root_unsharded"]) and (framework or "") in row["stacks"]


def fsdp2_lm_head_bytes(arch: Architecture, tp: int) -> float:
    """torchtitan's [norm, lm_head] FSDP unit is not resharded after forward: the 16-bit
    lm_head stays whole through the loss (fsdp.py apply_fsdp_to_decoder)."""
    return arch.vocab * arch.hidden * _data()["fsdp2"]["param_dtype_bytes"] / tp


def fsdp2_blocks_unsharded(stage_layers: int, pp: int) -> int:
    """Blocks whole at once: the one in flight and the one prefetched; with pipeline
    parallelism torchtitan does not reshard after forward (fsdp.py
    get_fsdp_reshard_after_forward_policy: "default" -> not pp_enabled), so every block of
    the stage stays whole from its forward to its backward."""
    fs = _data()["fsdp2"]
    return stage_layers if pp > 1 else min(fs["blocks_in_flight"], stage_layers)


def fsdp2_stage_grad_accumulator_bytes(stage_params: float, tp: int) -> float:
    """Whole fp32 gradients a pipeline stage accumulates across micro-batches under FSDP2."""
    return stage_params * _data()["fsdp2"]["pp_grad_accumulator_bytes"] / tp


def selective_saved_bytes_per_token(arch: Architecture, elem: float) -> float:
    """Bytes one block keeps per token under torchtitan's op-level SAC: the block input,
    every second matmul output (1st, 3rd, ...) and the attention output."""
    sac = _data()["selective_checkpointing"]
    h, hd = arch.hidden, arch.head_dim_
    widths = {
        "q": arch.heads * hd,
        "k": arch.kv_heads_ * hd,
        "v": arch.kv_heads_ * hd,
        "o": h,
        "gate": mlp_width(arch),
        "up": mlp_width(arch),
        "down": h,
    }
    order = sac["gated_mm_order"] if arch.gated_mlp else sac["plain_mm_order"]
    saved = sum(widths[name] for i, name in enumerate(order) if i % sac["saved_mm_every"] == 0)
    if sac["attention_output_saved"]:
        saved += arch.heads * hd
    return (h + saved) * elem


def liger_activation_saving_per_token(arch: Architecture, elem: float) -> float:
    """Per token per layer, what Liger's RMSNorm and SwiGLU do not save compared with the
    eager count in transformer.activation_bytes_per_token_layer (8 B x hidden per norm, 4
    tensors of the MLP width)."""
    lg = _data()["liger"]
    scale = elem / 2
    norms = 2 * (8 - lg["rms_norm_bytes_per_hidden"]) * arch.hidden * scale
    mlp = (4 - lg["swiglu_saved_tensors"]) * 2 * mlp_width(arch) * scale if arch.gated_mlp else 0
    return norms + mlp


def liger_loss_bytes(
    arch: Architecture, tokens: int, lm_head_trains: bool, param_bytes: int
) -> float:
    """Liger's fused linear cross-entropy: one chunk of logits, grad_input, the per-row
    loss and, when the lm_head trains, its gradient filled during the forward."""
    lg = _data()["liger"]
    inc = math.ceil(arch.vocab / arch.hidden)
    chunk = 2 ** math.ceil(math.log2(max(math.ceil(tokens / inc), 1)))
    b = min(chunk, tokens) * arch.vocab * lg["logit_chunk_bytes"]
    b += tokens * arch.hidden * lg["grad_input_bytes"] + tokens * lg["loss_row_bytes"]
    if lm_head_trains:
        b += arch.vocab * arch.hidden * param_bytes
    return b


def sequence_parallel_extra_per_token(hidden: int, elem: float, tp: int) -> tuple[float, float]:
    """(per block, before the loss): bytes per token that sequence parallelism keeps whole
    on every TP rank, beyond their 1/tp share the per-layer count already has: the
    all-gathered inputs of the column-parallel linears (data: sequence_parallel)."""
    sp = _data()["sequence_parallel"]
    whole = hidden * elem * (1 - 1 / tp)
    return sp["gathered_inputs_per_block"] * whole, sp["gathered_inputs_before_loss"] * whole
