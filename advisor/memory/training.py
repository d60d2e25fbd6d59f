"""Training memory: gradients, optimizer states, master weights, activations."""

from __future__ import annotations

import math

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import multimodal
from advisor.memory.terms import Breakdown, band, finish, rebalance
from advisor.memory.transformer import (
    ENCODER_FAMILIES,
    activation_bytes_per_token_layer,
    embedding_params,
    lora_target_dims,
    trainable_params,
)
from advisor.models import (
    Architecture,
    Attention,
    Estimate,
    Kind,
    Mode,
    Offload,
    Optimizer,
    Parallelism,
    ResolvedModel,
    Workload,
)

FUSED_OPTIMIZER_FRAMEWORKS = {"torchtune"}
# PEFT keeps adapters in fp32 and casts the layer input to fp32 for them.
PEFT_FRAMEWORKS = {None, "peft", "trl", "transformers", "llama-factory", "axolotl"}
# DeepSpeed's bf16/fp16 ZeRO optimizer keeps an fp32 gradient for its partition beside the
# fp32 master weights and moments (stage_1_and_2.py single_partition_of_fp32_groups[i].grad,
# stage3.py fp32_partitioned_groups_flat[i].grad): 4 more bytes per trained parameter.
DEEPSPEED_ZERO = {Parallelism.zero1, Parallelism.zero2, Parallelism.zero3}
DEEPSPEED_FP32_GRAD_BYTES = 4
DEEPSPEED_OVERLAP_FACTOR = 4.5
DEEPSPEED_BUCKET_ELEMENTS = 2e8
SAC_SAVED_FRACTION = 0.5
# Unsloth computes the loss with Cut Cross-Entropy (Wijmans et al. 2024, arXiv 2411.09009):
# the lm_head matmul and the log-softmax are fused per vocabulary block.
CUT_CROSS_ENTROPY_FRAMEWORKS = {"unsloth"}


def optimizer_state_bytes_per_param(opt: Optimizer, param_bytes: int, master_fp32: bool) -> float:
    """AdamW keeps two moments in the parameter dtype (torch.optim.AdamW); bitsandbytes
    8-bit Adam one byte each (arXiv 2110.02861); SGD momentum and Lion one buffer;
    Adafactor factored second moments (rows + cols, ~0 per parameter; arXiv 1804.04235).
    Mixed precision with 16-bit parameters adds fp32 master weights (4 B)."""
    per = {
        Optimizer.adamw: 2 * param_bytes,
        Optimizer.adamw_8bit: 2.0,
        Optimizer.paged_adamw_8bit: 2.0,
        Optimizer.sgd: 0.0,
        Optimizer.sgd_momentum: float(param_bytes),
        Optimizer.lion: float(param_bytes),
        Optimizer.adafactor: 0.02 * param_bytes,
    }[opt]
    return per + (4 if master_fp32 else 0)


def add_deepspeed_comm_buffers(
    acc: Breakdown, par: Parallelism, trainable: float, hidden: int
) -> int:
    """DeepSpeed with overlap_comm (on in the HF integration's sample configs) keeps about
    4.5 x the all-gather and reduce buckets in 16-bit: "overlap_comm ... uses 4.5x the
    allgather_bucket_size and reduce_bucket_size values" (DeepSpeed config docs). ZeRO-1/2
    buckets are 2e8 elements in those configs; ZeRO-3's "auto" buckets are hidden^2 (reduce)
    and 0.9 x hidden^2 (prefetch). A bucket never exceeds what is trained."""
    if par == Parallelism.zero3:
        buckets = min(hidden * hidden, trainable) + min(0.9 * hidden * hidden, trainable)
    else:
        buckets = 2 * min(DEEPSPEED_BUCKET_ELEMENTS, trainable)
    return acc.add(
        "comm_buffers",
        DEEPSPEED_OVERLAP_FACTOR * buckets * 2,
        f"DeepSpeed overlap_comm: {DEEPSPEED_OVERLAP_FACTOR:g} x {buckets / 1e6:.0f}M bucket elements x 2 B",
        elements_m=round(buckets / 1e6),
        factor=DEEPSPEED_OVERLAP_FACTOR,
    )


def precision_recipe(
    full: bool, fmt: str, compute: str, master: bool, framework: str | None
) -> str:
    """Which bytes per trained parameter the figure assumes, as a stable value the answer
    names in the user's language: AMP with fp32 master weights (HF Trainer / accelerate
    `bf16=True` on 16-bit weights, DeepSpeed), AMP on fp32 weights, pure 16-bit (torchtune,
    LLaMA-Factory `pure_bf16`), fp32, or adapters over a frozen base."""
    if framework == "unsloth":
        return "unsloth"
    if not full:
        return "adapters_fp32" if framework in PEFT_FRAMEWORKS else "adapters_16bit"
    if compute == "fp32":
        return "fp32_training"
    if fmt == "fp32":
        return "amp_fp32_weights"
    return "amp_fp32_master" if master else "pure_16bit"


def estimate_training(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    acc: Breakdown,
    arch: Architecture,
    params: float,
    fmt: str,
    weight_bytes: int,
    weight_formula: str,
    par: Parallelism,
    split: int,
    attention: Attention,
    framework: str | None,
) -> Estimate:
    n = w.num_gpus
    batch = w.batch_size or 1
    if w.batch_size is None:
        acc.assume("batch_size", 1)
    seq = w.seq_len or w.context_tokens or min(2048, arch.max_context_tokens)
    if w.seq_len is None and w.context_tokens is None:
        acc.assume("seq_len", seq)
    seq += multimodal.extra_prompt_tokens(model.id, w, acc)  # image / audio tokens
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = w.gradient_checkpointing
    if gc is None:
        gc = model.params_b >= 1.0
        acc.assume("gradient_checkpointing", "on" if gc else "off")
    ga = w.gradient_accumulation or 1
    compute = w.compute_dtype or ("fp32" if fmt == "fp32" and not w.mixed_precision else "bf16")
    full = w.mode in (Mode.full, Mode.pretrain)
    mixed = w.mixed_precision if w.mixed_precision is not None else False
    # AMP autocasts softmax and layer norms to fp32: saved activations average ~2.5 B.
    elem = 4 if compute == "fp32" else (2.5 if fmt == "fp32" else 2)
    dropout = (spec is not None and spec.family in ENCODER_FAMILIES) or model.kind == Kind.classic

    trainable = trainable_params(w, arch, params)
    # Parameter storage dtype of the trained weights: fp32 under AMP (fp32 weights), else
    # the weights' own 16-bit type. PEFT adapters are kept in fp32.
    if full:
        param_bytes = 4 if fmt == "fp32" else 2
    else:
        param_bytes = 4 if framework in PEFT_FRAMEWORKS or fmt == "fp32" else 2
    master = full and mixed and param_bytes == 2
    acc.assume("training_recipe", precision_recipe(full, fmt, compute, master, framework))
    offload_opt = w.cpu_offload in (Offload.optimizer, Offload.params)
    offload_params = w.cpu_offload == Offload.params

    shard_states = (
        n
        if par
        in (
            Parallelism.zero1,
            Parallelism.zero2,
            Parallelism.zero3,
            Parallelism.fsdp,
            Parallelism.tp,
            Parallelism.pp,
        )
        else 1
    )
    shard_grads = (
        n
        if par
        in (Parallelism.zero2, Parallelism.zero3, Parallelism.fsdp, Parallelism.tp, Parallelism.pp)
        else 1
    )

    # Weights.
    if offload_params:
        w_b = 0
    else:
        w_b = acc.add(
            "weights",
            weight_bytes / split,
            weight_formula + (f" / {split} cards" if split > 1 else ""),
            key="weights",
            params_b=round(model.params_b, 3),
            bits=round(catalog.find_format(fmt).bits, 2),  # type: ignore[union-attr]
            format=fmt,
            cards=split,
        )
    # AMP keeps a 16-bit copy of fp32 weights for the matmuls (autocast cache, saved for
    # backward); ZeRO-3/FSDP gather 16-bit layers a few at a time instead.
    layer_params = (params - embedding_params(arch)) / arch.layers
    if split > 1 and par in (Parallelism.zero3, Parallelism.fsdp):
        gather_bits = min(catalog.find_format(fmt).bits, 16)  # type: ignore[union-attr]
        gathered = 2 * layer_params * gather_bits / 8 / (w.tensor_parallel or 1)
        acc.add(
            "gathered_layers",
            gathered,
            f"ZeRO-3/FSDP all-gather: ~2 layers at {gather_bits:g} bits",
            bits=gather_bits,
        )
        w_b += int(gathered)
    elif fmt == "fp32" and compute != "fp32" and not offload_params:
        w_b += acc.add(
            "compute_copy",
            params * 2 / split,
            f"{model.params_b:g}B x 2 B autocast 16-bit copy of fp32 weights",
            params_b=round(model.params_b, 3),
            cards=split,
        )

    # Gradients and optimizer state.
    if offload_opt:
        g_b = acc.add(
            "gradients",
            min(trainable, 5e8) * param_bytes / shard_grads,
            "ZeRO-Offload: gradient buckets only (states on CPU)",
            key="gradients.offload",
        )
        o_b = 0
        step_temp = 0.0
    else:
        grads = trainable * param_bytes / shard_grads
        if w.optimizer_in_backward:
            grads = min(grads, arch.vocab * arch.hidden * param_bytes)
        g_b = acc.add(
            "gradients",
            grads,
            f"{trainable / 1e6:.1f}M trainable x {param_bytes} B"
            + (f" / {shard_grads}" if shard_grads > 1 else ""),
            key="gradients",
            params_m=round(trainable / 1e6, 1),
            bytes_per_param=param_bytes,
            shards=shard_grads,
        )
        # With fp32 master weights the moments are fp32 too (DeepSpeed / Megatron mixed precision).
        per = optimizer_state_bytes_per_param(opt, 4 if master else param_bytes, master)
        if master and par in DEEPSPEED_ZERO:
            per += DEEPSPEED_FP32_GRAD_BYTES
        o_b = acc.add(
            "optimizer",
            trainable * per / shard_states,
            f"{trainable / 1e6:.1f}M x {per:g} B ({opt.value}{' + fp32 master' if master else ''})"
            + (f" / {shard_states}" if shard_states > 1 else ""),
            key="optimizer",
            params_m=round(trainable / 1e6, 1),
            bytes_per_param=per,
            optimizer=opt.value,
            shards=shard_states,
        )
        # torch's foreach AdamW/Lion step allocates one more state-sized buffer; the fused
        # kernels do not, and torchtune's recipe configs ask for `fused: True`.
        foreach = opt in (Optimizer.adamw, Optimizer.lion, Optimizer.sgd_momentum) and (
            (w.framework or "").lower() not in FUSED_OPTIMIZER_FRAMEWORKS
        )
        step_temp = (
            trainable * param_bytes / shard_states
            if foreach and not w.optimizer_in_backward
            else 0.0
        )
    if par in DEEPSPEED_ZERO:
        g_b += add_deepspeed_comm_buffers(acc, par, trainable, arch.hidden)
    if par == Parallelism.ddp:
        g_b += acc.add(
            "ddp_buckets",
            trainable * param_bytes,
            "DDP gradient buckets (a second copy of the gradients)",
            params_m=round(trainable / 1e6, 1),
            bytes_per_param=param_bytes,
        )

    # Activations.
    tokens = batch * seq
    tp = w.tensor_parallel or (n if par == Parallelism.tp else 1)
    pp = w.pipeline_parallel or (n if par == Parallelism.pp else 1)
    # Each pipeline stage holds its own layers; 1F1B keeps up to `pp` micro-batches in
    # flight, about the whole local batch (torchtitan / Megatron schedules).
    layers = math.ceil(arch.layers / pp)
    seq_eff = seq + (200 if w.mode == Mode.prompt_tuning else 0)
    per_layer_tok = activation_bytes_per_token_layer(arch, seq_eff, attention, elem, dropout) / tp
    if w.mode in (Mode.lora, Mode.dora, Mode.qlora) and framework in PEFT_FRAMEWORKS:
        dims = lora_target_dims(arch, w.lora_targets)
        per_layer_tok += sum(4 * i for i, _ in dims)  # PEFT casts each adapter input to fp32
    one_layer = per_layer_tok * batch * seq_eff
    ckpt = 0.0
    if gc and w.selective_checkpointing:
        # Selective (op-level) checkpointing keeps about half of each layer's saved
        # tensors: torchtitan's default SAC policy saves every second matmul output and the
        # attention output, recomputing the rest (torchtitan docs, activation_checkpoint).
        saved = one_layer * layers * SAC_SAVED_FRACTION
        formula = (
            f"selective checkpointing: {SAC_SAVED_FRACTION:g} x {layers} layers x {tokens} tokens"
        )
    elif gc:
        # Unsloth's default use_gradient_checkpointing="unsloth" offloads the checkpoints
        # to CPU memory, as torchtune's enable_activation_offloading does.
        offloaded = w.activation_offload or framework in CUT_CROSS_ENTROPY_FRAMEWORKS
        ckpt = 0.0 if offloaded else 2 * arch.hidden * (elem / 2) * tokens * layers / tp
        saved = ckpt + one_layer
        formula = f"checkpointed: {layers} layer inputs x {tokens} tokens + one layer recomputed"
    else:
        saved = one_layer * layers
        formula = f"{layers} layers x {tokens} tokens x {per_layer_tok / 1024:.0f} KiB (Korthikanti 2022, {attention.value})"
    if w.mode == Mode.dora:
        saved += sum(i * o for i, o in lora_target_dims(arch, w.lora_targets)) * 4 * arch.layers
        formula += " + DoRA weight-norm products"
    a_b = acc.add(
        "activations",
        saved,
        formula,
        key="activations."
        + ("selective" if gc and w.selective_checkpointing else "checkpointed" if gc else "full"),
        layers=layers,
        tokens=tokens,
        kib_per_token_layer=round(per_layer_tok / 1024, 1),
        fraction=SAC_SAVED_FRACTION,
    )
    has_lm = not (spec is not None and spec.family in ENCODER_FAMILIES)
    logits_b = 0
    if has_lm:
        # 16-bit logits + fp32 copy + log-softmax + its gradient at the start of backward;
        # a chunked loss keeps the 16-bit logits and one fp32 chunk at a time.
        per = 2.5 if w.chunked_loss else (12.0 if elem <= 2.5 else 16.0)
        if framework in CUT_CROSS_ENTROPY_FRAMEWORKS:
            per = 0.0  # logits are never materialized: a vocabulary chunk at a time
        logits_b = acc.add(
            "logits",
            tokens * arch.vocab * per / tp,
            f"{tokens} tokens x {arch.vocab} vocab x {per:g} B ({'chunked' if w.chunked_loss else '16-bit + fp32 loss'})",
            key="logits.chunked" if w.chunked_loss else "logits",
            tokens=tokens,
            vocab=arch.vocab,
            bytes_per_logit=per,
        )
    transient = one_layer / 2  # backward of one layer: gradients of its activations

    grads_live = g_b if (ga > 1 or par == Parallelism.ddp) else 0
    # The loss's buffers are freed by its own backward before the first layer's backward
    # starts: a layer's transient never coexists with the logits.
    forward_peak = grads_live + a_b + max(logits_b, transient)
    step_peak = g_b + step_temp
    backward_peak = g_b + transient + ckpt * 0.5
    peak_extra = max(forward_peak, step_peak, backward_peak)
    if peak_extra == step_peak and step_temp > 0:
        acc.add(
            "optimizer_step",
            step_temp,
            "foreach optimizer step: one more state-sized buffer",
            params_m=round(trainable / 1e6, 1),
        )
    elif peak_extra == forward_peak and transient > logits_b:
        acc.add(
            "backward_transient", transient, "gradients of one layer's activations during backward"
        )
    allocated = w_b + o_b + int(peak_extra)
    # Breakdown terms must add up to the allocated total shown.
    listed = sum(t.bytes for t in acc.terms)
    if listed != allocated:
        rebalance(acc, allocated)
    return finish(acc, allocated, w, True, band(model, spec, True))
