"""The training recipe, resolved once (`training_setup`): batch, sequence, optimizer,
checkpointing, precision and sharding as the stack defaults them, each default stated in the
answer's `assumed`; and the bytes each trained parameter's optimizer state takes."""

from __future__ import annotations

import math

from advisor.catalog import ModelSpec
from advisor.memory import encoder, multimodal, sharding, speech_training
from advisor.memory.stacks import (
    default_checkpointing,
    kbit_activation_bytes,
    kbit_format,
    prodigy_buffers,
    unsloth_before,
    with_default_lora_targets,
)
from advisor.memory.terms import Breakdown
from advisor.memory.training_setup import TrainingSetup
from advisor.memory.transformer import trainable_params
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Mode, Optimizer, Parallelism
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

# Stacks whose full fine-tune recipes default to pure bf16 (no fp32 master): torchtune's
# configs set `dtype: bf16` with no mixed-precision wrapper (docs, read 2026-11-30).
PURE_16BIT = {"torchtune"}
# PEFT keeps adapters in fp32 and casts the layer input to fp32 for them (ms-swift trains
# LoRA through PEFT: base_args.py tuner_backend = 'peft').
PEFT_FRAMEWORKS = {
    None,
    "peft",
    "trl",
    "transformers",
    "llama-factory",
    "axolotl",
    "ms-swift",
    "atorch",
}
# Recipes that shard optimizer state over the cards (ZeRO-1 keeps gradients whole).
SHARDED_STATES = {
    Parallelism.zero1,
    Parallelism.zero2,
    Parallelism.zero3,
    Parallelism.fsdp,
    Parallelism.tp,
    Parallelism.pp,
}


def optimizer_state_bytes_per_param(opt: Optimizer, param_bytes: int, master_fp32: bool) -> float:
    """AdamW keeps two moments in the parameter dtype (torch.optim.AdamW); bitsandbytes
    8-bit Adam one byte each (arXiv 2110.02861); SGD momentum and Lion one buffer;
    Adafactor factored second moments (rows + cols, ~0 per parameter; arXiv 1804.04235);
    Prodigy four buffers, AdamW's two moments plus `s` and the starting point `p0`
    (data/training_stacks.toml [optimizer_state.prodigy]).
    Mixed precision with 16-bit parameters adds fp32 master weights (4 B)."""
    per = {
        Optimizer.adamw: 2 * param_bytes,
        Optimizer.adamw_8bit: 2.0,
        Optimizer.paged_adamw_8bit: 2.0,
        Optimizer.sgd: 0.0,
        Optimizer.sgd_momentum: float(param_bytes),
        Optimizer.lion: float(param_bytes),
        Optimizer.adafactor: 0.02 * param_bytes,
        Optimizer.prodigy: prodigy_buffers() * param_bytes,
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
    """The recipe's defaults, each stated in `assumed` when the user gave none: the run's
    own (`_run_defaults`) and its precision (`_precision`)."""
    n = w.num_gpus
    speech = speech_training.sequence(model.id, w, arch.layers, acc)
    w, batch, seq, opt, gc = _run_defaults(w, model, spec, acc, arch, framework, fmt, speech)
    compute = w.compute_dtype or ("fp32" if fmt == "fp32" and not w.mixed_precision else "bf16")
    full = w.mode in (Mode.full, Mode.pretrain)
    params = model.params_b * 1e9
    param_bytes, master = _precision(w, fmt, par, framework, compute, full, acc)
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
        layers=math.ceil((speech.encoder_layers if speech else arch.layers) / pp),
        pp=pp,
        labels=speech.labels if speech else 0,
        attention_keys=speech.attention_keys if speech else 0,
    )


def _run_defaults(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    acc: Breakdown,
    arch: Architecture,
    framework: str | None,
    fmt: str,
    speech: speech_training.SpeechSequence | None = None,
) -> tuple[Workload, int, int, Optimizer, bool]:
    """The batch, the sequence (with image or audio tokens), the LoRA targets, the optimizer
    and gradient checkpointing, each as asked or the stack's default, said.
    (workload with its LoRA targets, batch, sequence, optimizer, checkpointing)."""
    batch = w.batch_size or 1
    if w.batch_size is None:
        acc.assume("batch_size", 1)
    grid = encoder.training_grid_tokens(spec, w)
    if speech is not None:  # the encoder's frames and the decoder's labels, each once
        seq = speech.tokens
    else:
        seq = w.seq_len or w.context_tokens or grid or min(2048, arch.max_context_tokens)
        if w.seq_len is None and w.context_tokens is None:
            acc.assume("seq_len", seq)
        seq += multimodal.extra_prompt_tokens(model.id, w, acc)  # image tokens
    w = with_default_lora_targets(w, framework, acc)
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = w.gradient_checkpointing
    if gc is None:
        # a LoRA over 8- or 4-bit bitsandbytes weights is prepared for training as QLoRA is
        # (PEFT's prepare_model_for_kbit_training, use_gradient_checkpointing=True)
        kbit = w.mode == Mode.qlora or (w.mode == Mode.lora and kbit_format(fmt))
        by_stack = default_checkpointing(framework, w.num_gpus, qlora=kbit)
        gc = model.params_b >= 1.0 if by_stack is None else by_stack
        acc.assume("gradient_checkpointing", "on" if gc else "off")
    return w, batch, seq, opt, gc


def _precision(
    w: Workload,
    fmt: str,
    par: Parallelism,
    framework: str | None,
    compute: str,
    full: bool,
    acc: Breakdown,
) -> tuple[int, bool]:
    """The trained weights' storage bytes and whether fp32 master weights are kept, said as
    the training recipe. (bytes a trained parameter, master weights)."""
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
    recipe = precision_recipe(full, fmt, compute, master, framework)
    if recipe == "unsloth" and unsloth_before(w.unsloth_version, "cut_cross_entropy"):
        recipe = "unsloth_release"  # said by release (training_activations.py)
    acc.assume("training_recipe", recipe)
    return param_bytes, master


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
