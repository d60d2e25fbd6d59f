"""Training memory: gradients, optimizer states, master weights, activations."""

from __future__ import annotations

import math

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import distributed, encoder, multimodal, quantizers, sharding
from advisor.memory.stacks import (
    default_accumulation,
    default_checkpointing,
    kbit_activation_bytes,
    with_default_lora_targets,
)
from advisor.memory.terms import Breakdown, band, finish, rebalance, weights_line
from advisor.memory.training_setup import TrainingSetup
from advisor.memory.transformer import (
    ENCODER_FAMILIES,
    activation_bytes_per_token_layer,
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
    Runtime,
    Workload,
)

FUSED_OPTIMIZER_FRAMEWORKS = {"torchtune"}
# Stacks whose full fine-tune recipes default to pure bf16 (no fp32 master): torchtune's
# configs set `dtype: bf16` with no mixed-precision wrapper (docs, read 2026-11-30).
PURE_16BIT = {"torchtune"}
# PEFT keeps adapters in fp32 and casts the layer input to fp32 for them (ms-swift trains
# LoRA through PEFT: base_args.py tuner_backend = 'peft').
PEFT_FRAMEWORKS = {None, "peft", "trl", "transformers", "llama-factory", "axolotl", "ms-swift"}
# Recipes that shard optimizer state over the cards (ZeRO-1 keeps gradients whole).
SHARDED_STATES = {
    Parallelism.zero1,
    Parallelism.zero2,
    Parallelism.zero3,
    Parallelism.fsdp,
    Parallelism.tp,
    Parallelism.pp,
}
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


def training_setup(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    acc: Breakdown,
    arch: Architecture,
    fmt: str,
    par: Parallelism,
    split: int,
    attention: Attention,
    framework: str | None,
) -> TrainingSetup:
    """The recipe's defaults, each stated in `assumed` when the user gave none."""
    n = w.num_gpus
    batch = w.batch_size or 1
    if w.batch_size is None:
        acc.assume("batch_size", 1)
    grid = encoder.training_grid_tokens(spec, w)
    seq = w.seq_len or w.context_tokens or grid or min(2048, arch.max_context_tokens)
    if w.seq_len is None and w.context_tokens is None:
        acc.assume("seq_len", seq)
    seq += multimodal.extra_prompt_tokens(model.id, w, acc)  # image / audio tokens
    w = with_default_lora_targets(w, framework, acc)
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = w.gradient_checkpointing
    if gc is None:
        by_stack = default_checkpointing(framework, w.num_gpus, qlora=w.mode == Mode.qlora)
        gc = model.params_b >= 1.0 if by_stack is None else by_stack
        acc.assume("gradient_checkpointing", "on" if gc else "off")
    compute = w.compute_dtype or ("fp32" if fmt == "fp32" and not w.mixed_precision else "bf16")
    full = w.mode in (Mode.full, Mode.pretrain)
    params = model.params_b * 1e9
    # Not told: a full fine-tune keeps fp32 master weights and fp32 Adam moments (16 B per
    # parameter), as DeepSpeed and FSDP mixed precision always do and LLaMA-Factory does
    # unless `pure_bf16`; only torchtune's recipes train in pure bf16 by default. Assuming
    # pure bf16 here would halve the optimizer state and send a user into OOM.
    mixed = w.mixed_precision if w.mixed_precision is not None else framework not in PURE_16BIT
    # DeepSpeed ZeRO trains 16-bit parameters through fp32 partitions whatever the model's
    # dtype: stage_1_and_2.py (single_partition_of_fp32_groups) and stage3.py
    # (_create_fp32_partitions) copy each partition to fp32 and the optimizer steps those,
    # so its moments are fp32 too (DeepSpeed edaa722, read 2026-11-30). A "pure bf16" run
    # under ZeRO still keeps them.
    if par in sharding.DEEPSPEED_ZERO:
        mixed = True
    # Parameter storage dtype of the trained weights: fp32 under AMP (fp32 weights), else
    # the weights' own 16-bit type. PEFT adapters are kept in fp32.
    if full:
        param_bytes = 4 if fmt == "fp32" else 2
    else:
        param_bytes = 4 if framework in PEFT_FRAMEWORKS or fmt == "fp32" else 2
    master = full and mixed and param_bytes == 2
    acc.assume("training_recipe", precision_recipe(full, fmt, compute, master, framework))
    sharded = par in SHARDED_STATES
    tp = w.tensor_parallel or (n if par == Parallelism.tp else 1)
    pp = w.pipeline_parallel or (n if par == Parallelism.pp else 1)
    return TrainingSetup(
        w=w,
        model=model,
        spec=spec,
        arch=arch,
        params=params,
        fmt=fmt,
        par=par,
        split=split,
        attention=attention,
        framework=framework,
        batch=batch,
        seq=seq,
        opt=opt,
        gc=gc,
        compute=compute,
        full=full,
        # AMP autocasts softmax and layer norms to fp32: saved activations average
        # ~2.5 B. torchtitan's FSDP2 casts the parameters (param_dtype bf16) and runs no
        # autocast (config/configs.py), which would make them 2 B; not applied: on
        # torchtitan's own figures (max_memory_reserved) that leaves the allocated estimate
        # 12-16% under, a reserved-vs-allocated gap this view does not model.
        elem=activation_elem(framework, fmt, compute, full, par, acc),
        trainable=trainable_params(w, arch, params),
        param_bytes=param_bytes,
        master=master,
        shard_states=n if sharded else 1,
        shard_grads=n if sharded and par != Parallelism.zero1 else 1,
        tp=tp,
        # Each pipeline stage holds its own layers; 1F1B keeps up to `pp` micro-batches in
        # flight, about the whole local batch (torchtitan / Megatron).
        layers=math.ceil(arch.layers / pp),
        pp=pp,
    )


def activation_elem(
    framework: str | None, fmt: str, compute: str, full: bool, par: Parallelism, acc: Breakdown
) -> float:
    """Bytes per saved activation value: 4 in fp32, ~2.5 under AMP on fp32 weights (softmax
    and norms autocast to fp32), 2 in 16 bits; 4 where the stack upcasts a bitsandbytes
    model's norms and embeddings to fp32 (stacks.kbit_activation_bytes), stated."""
    sharded = par in (Parallelism.fsdp, Parallelism.zero3)
    kbit = None if full else kbit_activation_bytes(framework, fmt, sharded)
    if kbit is not None and compute != "fp32":
        acc.assume("activation_dtype", "fp32_kbit_upcast")
        return kbit
    return 4 if compute == "fp32" else (2.5 if fmt == "fp32" else 2)


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


# Log-probs of the kept logits as TRL's online trainers take them (selective_log_softmax on
# 16-bit logits, one sequence at a time, trl f2cd577 2026-07-24): the 16-bit logits, each
# row's 16-bit log-softmax saved for backward, and the logits' 16-bit gradient.
LOGPROB_BYTES_PER_LOGIT = 6.0


def _logprob_logits(t: TrainingSetup, acc: Breakdown) -> int:
    """The logits over the completion only (`loss_tokens` of each sequence), as log-probs."""
    w, arch = t.w, t.arch
    kept = max(t.batch * min(w.loss_tokens or t.seq, t.seq) // t.pp, 1)
    logits = kept * arch.vocab * LOGPROB_BYTES_PER_LOGIT / t.tp
    if acc.lean:
        return acc.add("logits", logits, "")
    return acc.add(
        "logits",
        logits,
        f"{kept} completion tokens x {arch.vocab} vocab x {LOGPROB_BYTES_PER_LOGIT:g} B (log-probs)",
        key="logits.logprobs",
        tokens=kept,
        vocab=arch.vocab,
        bytes_per_logit=LOGPROB_BYTES_PER_LOGIT,
    )


def add_activations(t: TrainingSetup, acc: Breakdown) -> tuple[int, int, float, float]:
    """Saved activations under the checkpointing recipe, and the loss's logits: (saved,
    logits, one layer's backward transient, the checkpoints themselves)."""
    w, arch, tokens, layers = t.w, t.arch, t.tokens, t.layers
    dropout = (t.spec is not None and t.spec.family in ENCODER_FAMILIES) or (
        t.model.kind == Kind.classic
    )
    seq_eff = t.seq + (200 if w.mode == Mode.prompt_tuning else 0)
    per_layer_tok = (
        activation_bytes_per_token_layer(arch, seq_eff, t.attention, t.elem, dropout) / t.tp
    )
    if w.liger_kernel:
        per_layer_tok -= distributed.liger_activation_saving_per_token(arch, t.elem) / t.tp
    sp_block, sp_loss = 0.0, 0.0
    if t.tp > 1 and distributed.fsdp2_stack(t.framework):
        sp_block, sp_loss = distributed.sequence_parallel_extra_per_token(arch.hidden, t.elem, t.tp)
        per_layer_tok += sp_block
    if w.mode in (Mode.lora, Mode.dora, Mode.qlora) and t.framework in PEFT_FRAMEWORKS:
        dims = lora_target_dims(arch, w.lora_targets)
        per_layer_tok += sum(4 * i for i, _ in dims)  # PEFT casts each adapter input to fp32
    if not t.full and quantizers.bnb_legacy_saves_inputs(t.fmt, t.framework):
        # the 4-bit layer keeps its input as cast to the compute dtype (16-bit under an
        # fp32 residual stream, stacks.kbit_activation_bytes)
        kept = t.elem if t.compute == "fp32" or t.elem <= 2.5 else 2.0
        per_layer_tok += quantizers.bnb_legacy_saved_bytes_per_token(arch, kept) / t.tp
        acc.assume("qlora_kernel", "bnb_keeps_inputs")
    one_layer = per_layer_tok * t.batch * seq_eff
    # A recomputed block (and its backward) holds one micro-batch: under pipeline
    # parallelism the schedule runs backward micro-batch by micro-batch.
    one_block = one_layer / t.pp
    ckpt = 0.0
    fraction = 1.0
    if t.gc and w.selective_checkpointing:
        # torchtitan's op-level SAC keeps the block input, every second matmul output and
        # the attention output (data/distributed.toml); backward recomputes the rest of
        # one block at a time.
        sac_tok = min(
            distributed.selective_saved_bytes_per_token(arch, t.elem) / t.tp, per_layer_tok
        )
        fraction = sac_tok / per_layer_tok
        saved = one_layer * fraction * layers + one_block * (1 - fraction)
        formula = f"selective checkpointing: {fraction:.2f} x {layers} layers x {tokens} tokens + one block recomputed"
    elif t.gc:
        # Unsloth's default use_gradient_checkpointing="unsloth" offloads the checkpoints
        # to CPU memory, as torchtune's enable_activation_offloading does.
        offloaded = w.activation_offload or t.framework in CUT_CROSS_ENTROPY_FRAMEWORKS
        ckpt = 0.0 if offloaded else 2 * arch.hidden * (t.elem / 2) * tokens * layers / t.tp
        saved = ckpt + one_block
        formula = f"checkpointed: {layers} layer inputs x {tokens} tokens + one layer recomputed"
    else:
        saved = one_layer * layers
        formula = f"{layers} layers x {tokens} tokens x {per_layer_tok / 1024:.0f} KiB (Korthikanti 2022, {t.attention.value})"
    if w.mode == Mode.dora:
        saved += sum(i * o for i, o in lora_target_dims(arch, w.lora_targets)) * 4 * arch.layers
        formula += " + DoRA weight-norm products"
    if sp_loss:
        saved += sp_loss * tokens // t.pp
        formula += " + sequence-parallel gathers"
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        a_b = acc.add("activations", saved, "")
    else:
        a_b = acc.add(
            "activations",
            saved,
            formula,
            key="activations."
            + (
                "selective"
                if t.gc and w.selective_checkpointing
                else "checkpointed"
                if t.gc
                else "full"
            ),
            layers=layers,
            tokens=tokens,
            kib_per_token_layer=round(per_layer_tok / 1024, 1),
            fraction=round(fraction, 2),
        )
    logits_b = 0
    # Under pipeline parallelism the last stage runs the loss one micro-batch at a time
    # (torch.distributed.pipelining schedules), and torchtitan splits the local batch into
    # as many micro-batches as pipeline ranks by default (config_manager.py 2024-12:
    # "The default value will be the number of pipeline stages").
    tokens = max(tokens // t.pp, 1)
    if w.loss_tokens is not None and not (t.spec is not None and t.spec.family in ENCODER_FAMILIES):
        return a_b, _logprob_logits(t, acc), one_block / 2, ckpt
    if not (t.spec is not None and t.spec.family in ENCODER_FAMILIES):
        # 16-bit logits + fp32 copy + log-softmax + its gradient at the start of backward;
        # a chunked loss keeps the 16-bit logits and one fp32 chunk at a time. Checked
        # 2026-11-30 against transformers' loss_utils.ForCausalLMLoss (v4.46+): it upcasts
        # the whole [tokens, vocab] tensor (`logits = logits.float()`, not per chunk) and
        # pads the labels instead of copying shifted logits; the peak is the log-softmax
        # backward: its saved fp32 output + nll's fp32 gradient + the fp32 gradient it
        # returns = 12 B per logit. Only torchtune's CEWithChunkedOutputLoss, Liger and
        # Unsloth (CUT_CROSS_ENTROPY_FRAMEWORKS) avoid the full fp32 tensor.
        # (by the matmuls' dtype, not the saved activations': an fp32 residual stream under
        # a bitsandbytes model still gives 16-bit logits under autocast)
        per = 2.5 if w.chunked_loss else (12.0 if t.compute != "fp32" else 16.0)
        if t.framework in CUT_CROSS_ENTROPY_FRAMEWORKS:
            per = 0.0  # logits are never materialized: a vocabulary chunk at a time
        elif w.liger_kernel:
            lm_head_trains = t.full or w.trainable_embeddings
            liger = distributed.liger_loss_bytes(arch, tokens, lm_head_trains, t.param_bytes)
            logits_b = acc.add(
                "logits",
                liger / t.tp,
                f"Liger fused linear cross-entropy: one logit chunk + grad_input over {tokens} tokens",
                key="logits.liger",
                tokens=tokens,
                vocab=arch.vocab,
            )
            return a_b, logits_b, one_block / 2, ckpt
        elif not w.chunked_loss:
            # The loss path by transformers era, checked against the code 2026-11-30:
            # < 4.46 (LlamaForCausalLM: `logits = logits.float()`, a shifted `.contiguous()`
            # copy, CrossEntropyLoss) holds fp32 logits + the shifted copy + log-softmax's
            # output at the forward's end, and log-softmax's saved output + the incoming and
            # outgoing gradients in backward: 12 B per logit, as the modern path (the 16-bit
            # logits are freed by the upcast; Trainer.compute_loss drops the outputs before
            # backward). Remote-code models of that era (Qwen-7B modeling_qwen.py, GPT-2
            # style) shift and cross-entropy the 16-bit logits: 6 B. So the modern figure
            # bounds both; the assumption says which path it is.
            acc.assume("loss_path", "fp32_logits")
        logits = tokens * arch.vocab * per / t.tp
        if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
            return a_b, acc.add("logits", logits, ""), one_block / 2, ckpt
        logits_b = acc.add(
            "logits",
            logits,
            f"{tokens} tokens x {arch.vocab} vocab x {per:g} B ({'chunked' if w.chunked_loss else '16-bit + fp32 loss'})",
            key="logits.chunked" if w.chunked_loss else "logits",
            tokens=tokens,
            vocab=arch.vocab,
            bytes_per_logit=per,
        )
    transient = one_block / 2  # backward of one layer: gradients of its activations
    return a_b, logits_b, transient, ckpt
