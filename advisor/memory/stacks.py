"""What a named training stack does when the user does not say (data/training_stacks.toml):
its gradient accumulation, its LoRA target modules, its activation checkpointing and the
weights' format of a full fine-tune."""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR
from advisor.memory.terms import Breakdown
from advisor.models.choices import Mode, Parallelism
from advisor.models.workload import Workload


@cache
def stack_defaults() -> dict:
    with (DATA_DIR / "training_stacks.toml").open("rb") as fh:
        return tomllib.load(fh)


def default_accumulation(framework: str | None, acc: Breakdown) -> int:
    """Gradient accumulation when not told: the named stack's default, else assumed
    accumulating, which keeps the previous micro-batch's gradients alive through the next
    forward (stated in the answer)."""
    steps = stack_defaults()["gradient_accumulation"].get(framework or "")
    if isinstance(steps, int):
        return steps
    acc.assume("gradient_accumulation", "kept")
    return 2


def with_default_lora_targets(w: Workload, framework: str | None, acc: Breakdown) -> Workload:
    """The workload with the named stack's LoRA targets when the user gave none (ms-swift
    and LLaMA-Factory adapt every linear layer, PEFT alone q_proj and v_proj)."""
    if w.mode not in (Mode.lora, Mode.qlora, Mode.dora) or w.lora_targets is not None:
        return w
    targets = stack_defaults()["lora_targets"].get(framework or "")
    if not isinstance(targets, str):
        return w
    acc.assume("lora_targets", targets)
    return w.model_copy(update={"lora_targets": targets})


def default_checkpointing(framework: str | None, cards: int, *, qlora: bool = False) -> bool | None:
    """Activation checkpointing when not told, as the named stack does it (None: the stack
    is not listed, the engine's own default holds). A QLoRA run under a stack in `qlora_on`
    is checkpointed: its 4-bit model is prepared by a helper that turns checkpointing on."""
    rules = stack_defaults()["gradient_checkpointing"]
    rule = rules.get(framework or "")
    if qlora and (framework or "") in rules.get("qlora_on", ()):
        rule = "on"
    if rule == "on":
        return True
    if rule == "off":
        return False
    if rule == "several_cards":
        return cards > 1
    return None


def kbit_format(fmt: str) -> bool:
    """Whether weights in this format are bitsandbytes' 8- or 4-bit ones that PEFT's
    prepare_model_for_kbit_training prepares (data/training_stacks.toml [kbit_training])."""
    return fmt in stack_defaults()["kbit_training"]["formats"]


def kbit_activation_bytes(framework: str | None, fmt: str, sharded: bool) -> float | None:
    """Bytes a saved activation takes when the stack prepares a bitsandbytes model for
    training with its norms and embeddings upcast to fp32 (data/training_stacks.toml
    [kbit_training]); None where the stack does not (or the 4-bit weights are sharded)."""
    row = stack_defaults()["kbit_training"]
    if sharded or fmt not in row["formats"] or (framework or "") not in row["stacks"]:
        return None
    return float(row["activation_bytes"])


def kbit_upcast_bytes(framework: str | None, fmt: str, sharded: bool) -> float | None:
    """Bytes a weight the quantizer left 16-bit (embeddings, LM head, norms) takes once the
    stack prepares a bitsandbytes model for training and upcasts it to fp32
    (data/training_stacks.toml [kbit_training] upcast_bytes); None where the stack does not
    (or the 4-bit weights are sharded), as `kbit_activation_bytes`."""
    if kbit_activation_bytes(framework, fmt, sharded) is None:
        return None
    return float(stack_defaults()["kbit_training"]["upcast_bytes"])


def amp_fp32_weights() -> dict:
    """Autocast over fp32 weights: the bytes of a layer's checkpointed input (the fp32
    residual stream) and the bits FSDP gathers an unsharded unit in (data/training_stacks.toml
    [amp_fp32_weights])."""
    return stack_defaults()["amp_fp32_weights"]


def autocast_over_fp32(fmt: str, compute: str, par: Parallelism, framework: str | None) -> bool:
    """Whether the forward runs autocast over the fp32 parameters themselves, nothing casting
    them first: an unsharded run (one card, DDP) of fp32 weights under mixed precision, or
    FSDP under a stack that mixes precision by autocast alone (data/training_stacks.toml
    [amp_fp32_weights] autocast_fsdp). DeepSpeed converts the module, and accelerate's FSDP
    casts the parameters (MixedPrecision param_dtype)."""
    if fmt != "fp32" or compute == "fp32":
        return False
    if par in (Parallelism.none, Parallelism.ddp):
        return True
    return par == Parallelism.fsdp and (framework or "") in amp_fp32_weights()["autocast_fsdp"]


def precompute_sequential(framework: str | None) -> bool:
    """Whether the stack caches latents and text-encoder outputs one after the other, the
    VAE off the card while the text encoders run (data/training_stacks.toml
    [precompute_phases])."""
    return (framework or "").lower() in stack_defaults()["precompute_phases"]["sequential"]


def chunked_by_default(framework: str | None) -> bool:
    """Whether the stack's recipes run a chunked loss when none is named (torchtune's
    LinearCrossEntropyLoss; data/training_stacks.toml [loss])."""
    return (framework or "").lower() in stack_defaults()["loss"]["chunked_default"]


def stack_loss_bytes(
    framework: str | None, chunked: bool | None, compiled: bool
) -> tuple[float, str] | None:
    """Bytes a logit the stack's own chunked loss holds at its peak, and the loss's name
    (data/training_stacks.toml [loss]); None where the stack has no chunked loss of its own
    or a standard loss is asked. Its default (`chunked` None): each chunk's fp32 log-softmax
    output kept for backward, beside the last chunk's 16-bit logits and fp32 copy. Its
    CEWithChunkedOutputLoss (`chunked` True): the 16-bit logit chunks on top, eager; under
    torch.compile the chunks and one chunk's fp32 scratch only."""
    if chunked is False or not chunked_by_default(framework):
        return None
    row = stack_defaults()["loss"]
    chunks, logit, fp32 = row["num_output_chunks"], row["logit_bytes"], row["fp32_bytes"]
    if chunked is None:
        return fp32 + (logit + fp32) / chunks, "stack_linear_ce"
    if compiled:
        return logit + fp32 / chunks, "stack_chunked_ce_compiled"
    return logit + fp32 + fp32 / chunks, "stack_chunked_ce"


def full_weights_format(framework: str | None) -> str | None:
    """The weights' format a full fine-tune keeps when no format is named, where the stack
    decides it (data/training_stacks.toml [full_weights]: kohya keeps fp32 without
    --full_bf16 / --full_fp16); None: the engine's own default holds."""
    return stack_defaults()["full_weights"].get((framework or "").lower())


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def unsloth_before(version: str | None, change: str) -> bool:
    """Whether the Unsloth release named runs before a change of data/training_stacks.toml
    [unsloth_release] (`offloaded_checkpoints`, `cut_cross_entropy`); None: today's."""
    if version is None:
        return False
    since = stack_defaults()["unsloth_release"][f"{change}_since"]
    return _release(version)[:2] < _release(since)[:2]


def unsloth_logit_bytes() -> float:
    """Bytes a logit Unsloth's Fast_CrossEntropyLoss holds before Cut Cross-Entropy."""
    return float(stack_defaults()["unsloth_release"]["logit_bytes_before_cce"])


def prodigy_buffers() -> int:
    """Buffers Prodigy keeps a parameter (data/training_stacks.toml [optimizer_state.prodigy])."""
    return int(stack_defaults()["optimizer_state"]["prodigy"]["buffers"])
