"""The training recipe a line asks for, as assembled from what the recognizers read: a
fine-tune word resolved to a recipe (full, LoRA, QLoRA) by the model, card and framework; a
post-training method's policy recipe; a 4-bit format that makes LoRA QLoRA; training words
without a mode word; a LoRA an image UI loads; and the dtype a card forces on training."""

from __future__ import annotations

from typing import Any

from advisor import catalog
from advisor.models.choices import Kind, Mode
from advisor.parse import vocab
from advisor.parse.scan import Reading
from advisor.parse.tasks import POST_TRAINING

_FOUR_BIT = ("int4", "nf4", "fp4")
# The policy's recipe under a post-training method, as the user named it.
_POLICY_MODES = ("qlora", "dora", "lora", "ia3", "prompt_tuning", "freeze", "full")
_ROLLOUT_ENGINES = ("vllm", "sglang")


def post_training_mode(r: Reading, fields: dict[str, Any], assumed: list[str]) -> str:
    """ "GRPO qwen2.5-7b", "全参 DPO", "QLoRA DPO llama3-8b", "grpo with vllm": the method is
    the mode, the LoRA / QLoRA / full word beside it the policy's recipe (None: rl.py's
    LoRA default, stated there); a serving engine named is the rollout engine, colocated
    unless a server is named, not the runtime of the run."""
    named = [m for m in r.modes if m in _POLICY_MODES]
    policy = named[0] if named else None
    if policy is None and fields.get("weights_format") in _FOUR_BIT:
        policy = "qlora"
    if policy == "full" and fields.get("weights_format") in _FOUR_BIT:
        policy = "qlora"  # a 4-bit base takes no updates: QLoRA (as four_bit_mode says)
    stack = vocab.load("runtimes")["implied_mode"]["framework"].get(fields.get("framework") or "")
    if policy is None and stack == "qlora":
        policy = "qlora"  # "unsloth grpo": its loader's 4-bit default, said so
        assumed.append(f"{fields['framework']}_base = qlora")
    if policy == "qlora":
        fields["weights_format"] = "nf4"
    if policy is not None:
        fields["policy_mode"] = Mode(policy)
    runtime = fields.get("runtime")
    if runtime is not None and str(getattr(runtime, "value", runtime)) in _ROLLOUT_ENGINES:
        fields.pop("runtime")
        if fields.get("framework") in _ROLLOUT_ENGINES:
            fields.pop("framework")
        fields.setdefault("rollout", "colocate")
    return r.post_training  # type: ignore[return-value]


# 16-bit weights above this share of the card's memory leave too little for LoRA's
# activations and adapter state: the usual answer is QLoRA.
_LORA_WEIGHT_SHARE = 0.75


def resolve_finetune(
    fields: dict[str, Any],
    kind: Kind | None,
    family: str | None,
    params_b: float | None,
    gpu_id: str | None,
    vram_gib: float | None,
    gpu_count: int | None,
    assumed: list[str],
) -> str:
    """ "微调" / "fine-tune" with no method word. On an LLM: LoRA (LLaMA-Factory's default
    finetuning_type, what students mean); QLoRA on 4-bit weights (a "-bnb-4bit" repo, "4bit")
    or when 16-bit weights would not fit the card named. Sharded training (ZeRO, FSDP) and
    other kinds of model: a full fine-tune."""
    parallelism = fields.get("parallelism")
    sharded = parallelism is not None and parallelism.value in ("zero2", "zero3", "fsdp")
    full_families = vocab.load("tasks")["finetune"]["full_families"]
    if kind not in (None, Kind.llm) or sharded or family in full_families:
        return "full"
    if fields.get("weights_format") in _FOUR_BIT:
        fields["weights_format"] = "nf4"
        assumed.append("finetune = qlora")
        return "qlora"
    stack = fields.get("framework") or ""
    four_bit = vocab.load("runtimes")["implied_mode"]["framework"].get(stack) == "qlora"
    if four_bit and fields.get("weights_format") is None:
        fields["weights_format"] = "nf4"  # "unsloth 微调": its loader's 4-bit default
        assumed.append(f"{stack}_base = qlora")
        return "qlora"
    memory = vram_gib
    if gpu_id is not None and (gpu := catalog.gpus().get(gpu_id)) is not None:
        memory = gpu.usable_vram_gib
    weights_gib = (params_b or 0) * 2e9 / 2**30
    too_big = memory and weights_gib > _LORA_WEIGHT_SHARE * memory * (gpu_count or 1)
    if too_big and fields.get("weights_format") is None:
        fields["weights_format"] = "nf4"
        assumed.append("finetune_fit = qlora")
        return "qlora"
    assumed.append("finetune = lora")
    return "lora"


def four_bit_mode(mode: str, fields: dict[str, Any], assumed: list[str]) -> str:
    """Training on 4-bit weights is QLoRA: LoRA on int4/nf4 is the bitsandbytes recipe, and
    a 4-bit base cannot be fully fine-tuned (its weights take no gradient), so "全参微调 …
    int4" or "换成 int4" after a full fine-tune becomes QLoRA, said so."""
    fmt = fields.get("weights_format")
    spec = catalog.formats().get(fmt) if fmt else None
    if mode == "lora" and fmt in _FOUR_BIT:
        mode = "qlora"  # LoRA on 4-bit weights is QLoRA (the bitsandbytes recipe)
        fields["weights_format"] = "nf4"
        assumed.append("mode = qlora (LoRA on 4-bit weights)")
    elif mode in ("full", "pretrain") and spec is not None and spec.bits < 8:
        mode = "qlora"
        if fmt not in ("nf4", "nf4-dq"):
            fields["weights_format"] = "nf4"
        assumed.append("four_bit_full = qlora")
    if mode == "qlora" and fields.get("weights_format") in (None, "int4"):
        fields["weights_format"] = "nf4"  # QLoRA's 4-bit is bitsandbytes NF4
    return mode


def lora_loaded(
    mode: str, fields: dict[str, Any], kind: Kind | None, r: Reading, assumed: list[str]
) -> str:
    """ "ComfyUI … + lora": an image UI loading a LoRA to generate, not LoRA training, unless a
    training word is there too ("comfyui lora 训练")."""
    uis = vocab.load("runtimes")["inference_uis"]
    trained = {"full", "train", "pretrain", "finetune", *POST_TRAINING} & set(r.modes)
    if mode == "lora" and kind == Kind.diffusion and fields.get("runtime") in uis and not trained:
        assumed.append("lora_loaded = LoRA")
        return "inference"
    return mode


def unsloth_dtype(fields: dict[str, Any], gpu_id: str | None, assumed: list[str]) -> None:
    """Unsloth trains in fp16 on cards without bf16 (T4, V100): its loader picks the dtype
    from torch.cuda.is_bf16_supported() (unsloth/models/loader.py, read 2026-11-30)."""
    gpu = catalog.gpus().get(gpu_id) if gpu_id else None
    if (
        fields.get("framework") == "unsloth"
        and fields["mode"].is_training
        and gpu is not None
        and not gpu.bf16_supported
        and fields.get("compute_dtype") is None
    ):
        fields["compute_dtype"] = "fp16"
        assumed.append("unsloth_dtype = fp16")


def fp32_only_training(fields: dict[str, Any], gpu_id: str | None, assumed: list[str]) -> None:
    """A card with no fp16 arithmetic (Kepler, Maxwell; data/architectures.toml
    fp16_training) trains in fp32 where no precision was named: fp16 autocast gains no
    speed there and bf16 does not exist."""
    from advisor.architectures import architecture_of

    gpu = catalog.gpus().get(gpu_id) if gpu_id else None
    arch = architecture_of(gpu)
    if (
        arch is not None
        and not arch.fp16_training
        and fields["mode"].is_training
        and fields.get("weights_format") is None
        and fields.get("compute_dtype") is None
        and fields.get("mixed_precision") is None
    ):
        fields["weights_format"] = "fp32"
        assumed.append("weights_format = fp32 (no fp16 arithmetic on this card)")


def implied_mode(fields: dict[str, Any], assumed: list[str]) -> str | None:
    """Training words without a mode word ("fsdp 4卡", "unsloth", "amp") still mean training.
    A framework named beside a GGUF runtime ("unsloth's R1 GGUF with llama.cpp") names who
    made the file: llama.cpp, Ollama and LM Studio only run inference."""
    implied = vocab.load("runtimes")["implied_mode"]
    parallelism = fields.get("parallelism")
    mode = implied["parallelism"].get(parallelism.value if parallelism else "")
    if fields.get("runtime") not in vocab.load("runtimes")["gguf_runtimes"]:
        mode = mode or implied["framework"].get(fields.get("framework") or "")
    if mode is None and fields.get("mixed_precision") is not None:
        mode = implied["mixed_precision"]
    if mode is not None:
        assumed.append(f"mode = {mode} (training words)")
    return mode
