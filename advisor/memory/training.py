"""Training memory: resident weights, gradients, optimizer states and the step's buffers,
over the recipe (`training_recipe`) and the saved activations and logits
(`training_activations`)."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import sharding
from advisor.memory.band import band
from advisor.memory.quantizers import kept_bytes_per_weight
from advisor.memory.stacks import default_accumulation, kbit_upcast_bytes, stack_defaults
from advisor.memory.terms import Breakdown, finish, rebalance, weights_line
from advisor.memory.training_activations import add_activations
from advisor.memory.training_recipe import optimizer_state_bytes_per_param, training_setup
from advisor.memory.training_setup import TrainingSetup
from advisor.memory.transformer import embedding_params
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Offload, Optimizer, Parallelism, Runtime
from advisor.models.estimate import Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

FUSED_OPTIMIZER_FRAMEWORKS = {"torchtune"}


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
    t = training_setup(w, model, spec, acc, arch, fmt, par, split, attention, framework)
    w_b = add_resident_weights(t, acc, weight_bytes, weight_formula)
    g_b, o_b, step_temp = add_states(t, acc)
    a_b, logits_b, transient, ckpt = add_activations(t, acc)
    logits_b += _add_head_cast(t, acc, logits_b)

    ga = w.gradient_accumulation or default_accumulation(framework, acc)
    grads_live = g_b if (ga > 1 or par == Parallelism.ddp) else 0
    # The loss's buffers are freed by its own backward before the first layer's backward
    # starts: a layer's transient never coexists with the logits.
    forward_peak = grads_live + a_b + max(logits_b, transient)
    step_peak = g_b + step_temp
    backward_peak = g_b + transient + ckpt * 0.5
    peak_extra = max(forward_peak, step_peak, backward_peak)
    if peak_extra == step_peak and step_temp > 0 and acc.lean:
        acc.add("optimizer_step", step_temp, "")  # a lean breakdown keeps no text
    elif peak_extra == step_peak and step_temp > 0:
        acc.add(
            "optimizer_step",
            step_temp,
            "foreach optimizer step: one more state-sized buffer",
            params_m=round(t.trainable / 1e6, 1),
        )
    elif peak_extra == forward_peak and transient > logits_b:
        acc.add(
            "backward_transient", transient, "gradients of one layer's activations during backward"
        )
    allocated = w_b + o_b + int(peak_extra)
    # Breakdown terms must add up to the allocated total shown.
    listed = sum(term.bytes for term in acc.terms)
    if listed != allocated:
        rebalance(acc, allocated)
    est = finish(acc, allocated, w, True, band(model, spec, True, w.arch is not None))
    est.runtime = Runtime.transformers  # PyTorch training; the stack is `framework`
    return est


def add_resident_weights(
    t: TrainingSetup, acc: Breakdown, weight_bytes: int, weight_formula: str
) -> int:
    """The weights on each card, plus what the recipe adds beside them: ZeRO-3/FSDP gather
    16-bit layers a few at a time; AMP on fp32 weights keeps a 16-bit copy for the matmuls
    (autocast cache, saved for backward)."""
    w, fmt, split = t.w, t.fmt, t.split
    offload_params = w.cpu_offload == Offload.params
    w_b = 0
    if not offload_params:
        bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
        key, values = (
            weights_line(t.model.params_b * 1e9, weight_bytes, bits, fmt, split)
            if not acc.lean  # a lean breakdown keeps no text
            else ("weights", {})
        )
        w_b = acc.add(
            "weights",
            weight_bytes / split,
            weight_formula + (f" / {split} cards" if split > 1 else ""),
            key=key,
            **values,
        )
    # ZeRO-3 gathers into a new full-size buffer even on one GPU (partition_parameters.py
    # all_gather_coalesced: torch.empty(partition_sz * world_size)).
    w_b += sharding.add_bnb_quant_state(t, acc)
    if not offload_params:
        w_b += _add_kbit_upcast(t, acc)
    if (split > 1 and t.par == Parallelism.fsdp) or t.par == Parallelism.zero3:
        w_b += sharding.add_gathered(t, acc)
    elif fmt == "fp32" and t.compute != "fp32" and not offload_params:
        w_b += acc.add(
            "compute_copy",
            t.params * 2 / split,
            f"{t.model.params_b:g}B x 2 B autocast 16-bit copy of fp32 weights",
            params_b=round(t.model.params_b, 3),
            cards=split,
        )
    return w_b


def _kbit_upcast(t: TrainingSetup) -> float | None:
    """Bytes a weight left unquantized takes once the stack's prepare_model_for_kbit_training
    has upcast it (None: not upcast here)."""
    sharded = t.par in (Parallelism.fsdp, Parallelism.zero3)
    upcast = None if t.full else kbit_upcast_bytes(t.framework, t.fmt, sharded)
    spec = catalog.find_format(t.fmt)
    return None if spec is None or spec.scope != "linear" else upcast


def _add_kbit_upcast(t: TrainingSetup, acc: Breakdown) -> int:
    """PEFT's prepare_model_for_kbit_training casts every 16-bit parameter that is not 4-bit
    to fp32: the embeddings, the LM head and the norms the quantizer left in the load dtype
    stay fp32 on the card (data/training_stacks.toml [kbit_training] upcast_bytes). The
    weights term holds them at the load dtype; this is the difference."""
    upcast = _kbit_upcast(t)
    if upcast is None:
        return 0
    kept = min(embedding_params(t.arch) + t.arch.unquantized_params, t.params)
    extra = kept * (upcast - kept_bytes_per_weight("bf16")) / t.split
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("kbit_upcast", extra, "")
    return acc.add(
        "kbit_upcast",
        extra,
        f"{kept / 1e9:.2f}B unquantized weights (embeddings, lm_head, norms) upcast to fp32"
        " by prepare_model_for_kbit_training",
        params_b=round(kept / 1e9, 2),
        cards=t.split,
    )


def _add_head_cast(t: TrainingSetup, acc: Breakdown, logits_b: int) -> int:
    """The LM head upcast to fp32 runs under 16-bit autocast: autocast casts the frozen fp32
    weight afresh (no cache for a weight that needs no grad) and the matmul saves that
    16-bit copy for the input's gradient, from the head's forward through the loss's
    backward (data/training_stacks.toml [kbit_training] head_cast_bytes)."""
    if not logits_b or _kbit_upcast(t) is None or t.compute == "fp32":
        return 0
    if t.w.liger_kernel or t.w.classifier_head:
        return 0  # the fused loss takes the head's weight itself; a classifier has no LM head
    per = stack_defaults()["kbit_training"]["head_cast_bytes"]
    head = t.arch.vocab * t.arch.hidden
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("head_cast", head * per / t.tp, "")
    return acc.add(
        "head_cast",
        head * per / t.tp,
        f"{head / 1e6:.0f}M fp32 lm_head weights cast to {per} B by autocast, saved for backward",
        params_m=round(head / 1e6),
        bytes_per_param=per,
    )


def add_states(t: TrainingSetup, acc: Breakdown) -> tuple[int, int, float]:
    """Gradients, optimizer state and the buffers around them: (gradients and buffers,
    optimizer state, the optimizer step's temporary)."""
    w, arch, trainable = t.w, t.arch, t.trainable
    if w.cpu_offload in (Offload.optimizer, Offload.params):
        g_b = acc.add(
            "gradients",
            min(trainable, 5e8) * t.param_bytes / t.shard_grads,
            "ZeRO-Offload: gradient buckets only (states on CPU)",
            key="gradients.offload",
        )
        o_b, step_temp = 0, 0.0
    else:
        grads = trainable * t.param_bytes / t.shard_grads
        if w.optimizer_in_backward:
            grads = min(grads, arch.vocab * arch.hidden * t.param_bytes)
        # With fp32 master weights the moments are fp32 too (DeepSpeed / Megatron mixed precision).
        per = optimizer_state_bytes_per_param(t.opt, 4 if t.master else t.param_bytes, t.master)
        states = trainable * per / t.shard_states
        if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
            g_b, o_b = acc.add("gradients", grads, ""), acc.add("optimizer", states, "")
        else:
            g_b, o_b = _add_state_terms(t, acc, grads, per, states)
        # torch's foreach AdamW/Lion step allocates one more state-sized buffer; the fused
        # kernels do not, and torchtune's recipe configs ask for `fused: True`.
        foreach = t.opt in (Optimizer.adamw, Optimizer.lion, Optimizer.sgd_momentum) and (
            (w.framework or "").lower() not in FUSED_OPTIMIZER_FRAMEWORKS
        )
        foreach = foreach and not w.optimizer_in_backward
        step_temp = trainable * t.param_bytes / t.shard_states if foreach else 0.0
        if t.master and t.par in sharding.DEEPSPEED_ZERO:
            step_temp = sharding.deepspeed_step_bytes(t, foreach)
        o_b += sharding.add_stage_grad_accumulators(t, acc)
    if t.par in sharding.DEEPSPEED_ZERO:
        g_b += sharding.add_deepspeed_comm_buffers(acc, t.par, trainable, arch.hidden, t.framework)
    if t.par == Parallelism.ddp:
        g_b += acc.add(
            "ddp_buckets",
            trainable * t.param_bytes,
            "DDP gradient buckets (a second copy of the gradients)",
            params_m=round(trainable / 1e6, 1),
            bytes_per_param=t.param_bytes,
        )
    return g_b, o_b, step_temp


def _add_state_terms(
    t: TrainingSetup, acc: Breakdown, grads: float, per: float, states: float
) -> tuple[int, int]:
    """The gradients and optimizer-state terms with their text: (gradients, state)."""
    trainable = t.trainable
    g_b = acc.add(
        "gradients",
        grads,
        f"{trainable / 1e6:.1f}M trainable x {t.param_bytes} B"
        + (f" / {t.shard_grads}" if t.shard_grads > 1 else ""),
        key="gradients",
        params_m=round(trainable / 1e6, 1),
        bytes_per_param=t.param_bytes,
        shards=t.shard_grads,
    )
    o_b = acc.add(
        "optimizer",
        states,
        f"{trainable / 1e6:.1f}M x {per:g} B ({t.opt.value}{' + fp32 master' if t.master else ''})"
        + (f" / {t.shard_states}" if t.shard_states > 1 else ""),
        key="optimizer",
        params_m=round(trainable / 1e6, 1),
        bytes_per_param=per,
        optimizer=t.opt.value,
        shards=t.shard_states,
    )
    return g_b, o_b
