"""The choices a workload names: what kind of work, what is done with the model, and the
optimizer, attention, parallelism, offload and runtime it runs with (advisor.models.workload)."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """What sort of workload: decides which estimator runs."""

    llm = "llm"
    diffusion = "diffusion"
    classic = "classic"
    rendering = "rendering"
    video = "video"
    simulation = "simulation"


class Mode(StrEnum):
    """What is done with the model."""

    inference = "inference"
    load_only = "load_only"
    full = "full"  # full fine-tune (all weights trained)
    pretrain = "pretrain"  # full training from scratch: memory as `full`, time from tokens
    lora = "lora"
    qlora = "qlora"
    dora = "dora"
    ia3 = "ia3"
    prompt_tuning = "prompt_tuning"
    freeze = "freeze"  # freeze-tuning: only the last layers train
    # Preference and RL post-training: the policy trains as `policy_mode` says
    # (LoRA unless told), and advisor/memory/rl.py adds the models and the rollout each
    # method keeps beside it (data/post_training.toml).
    grpo = "grpo"
    dpo = "dpo"
    ppo = "ppo"
    kto = "kto"
    orpo = "orpo"
    simpo = "simpo"
    rloo = "rloo"

    # Every mode but inference and load_only trains. Set on each member below, a plain
    # attribute: the engine reads it ~50 times per new question, and a property call was
    # ~1.5% of a recommendation (py-spy).
    is_training: bool
    is_post_training: bool  # one of the preference / RL methods above


POST_TRAINING_MODES = frozenset(
    (Mode.grpo, Mode.dpo, Mode.ppo, Mode.kto, Mode.orpo, Mode.simpo, Mode.rloo)
)
for _mode in Mode:
    _mode.is_training = _mode not in (Mode.inference, Mode.load_only)
    _mode.is_post_training = _mode in POST_TRAINING_MODES


class Optimizer(StrEnum):
    adamw = "adamw"
    adamw_8bit = "adamw_8bit"
    paged_adamw_8bit = "paged_adamw_8bit"
    sgd = "sgd"
    sgd_momentum = "sgd_momentum"
    adafactor = "adafactor"
    lion = "lion"
    prodigy = "prodigy"


class Attention(StrEnum):
    eager = "eager"
    sdpa = "sdpa"
    flash = "flash"
    sliced = "sliced"


class Parallelism(StrEnum):
    none = "none"
    ddp = "ddp"
    zero1 = "zero1"
    zero2 = "zero2"
    zero3 = "zero3"
    fsdp = "fsdp"  # FULL_SHARD, memory as ZeRO-3
    tp = "tp"
    pp = "pp"
    layer = "layer"  # llama.cpp --split-mode layer (Ollama, LM Studio): whole layers per card


class Offload(StrEnum):
    none = "none"
    optimizer = "optimizer"  # ZeRO-Offload: optimizer state (and its step) on the CPU
    params = "params"  # parameters, gradients and optimizer state on the CPU (ZeRO-3/FSDP)
    model = "model"  # diffusers enable_model_cpu_offload: one component on the GPU at a time
    sequential = "sequential"  # diffusers enable_sequential_cpu_offload: weights streamed


class Runtime(StrEnum):
    """The program that runs the model: each allocates memory its own way.

    Ollama and LM Studio run llama.cpp; ComfyUI and the WebUIs run diffusers-like pipelines.
    They are kept apart because the answer names the program the user typed.
    """

    transformers = "transformers"
    vllm = "vllm"
    sglang = "sglang"
    tgi = "tgi"
    llamacpp = "llamacpp"
    ollama = "ollama"
    lmstudio = "lmstudio"
    exllamav2 = "exllamav2"
    lmdeploy = "lmdeploy"
    mlx = "mlx"
    diffusers = "diffusers"
    comfyui = "comfyui"
    webui = "webui"
