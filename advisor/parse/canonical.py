"""A parsed question as one line the parser reads back to the same question."""

from __future__ import annotations

from advisor.models.choices import Optimizer
from advisor.models.workload import Workload
from advisor.parse.assemble import ParsedQuery
from advisor.parse.stack import framework_of

_MODE_WORD = {
    "inference": "inference",
    "full": "full",
    "pretrain": "pretrain",
    "lora": "lora",
    "qlora": "qlora",
    "dora": "dora",
    "ia3": "ia3",
    "prompt_tuning": "prompt-tuning",
    "freeze": "freeze",
    "load_only": "inference",
    **{m: m for m in ("grpo", "dpo", "ppo", "kto", "orpo", "simpo", "rloo")},
}
# Runtime values -> a word the runtime recognizer reads back (vocab/runtimes.toml).
_RUNTIME_WORD = {"llamacpp": "llama.cpp", "lmstudio": "lm studio", "exllamav2": "exllamav2"}


def _training_parts(w: Workload) -> list[str]:
    parts = []
    if w.lora_rank:
        parts.append(f"rank {w.lora_rank}")
    if w.lora_targets:
        parts.append(w.lora_targets)  # "all-linear" / "q_proj,v_proj", read back as told
    if w.rollout == "colocate":
        parts.append("vllm")
    if w.train_tokens:
        parts.append(f"data {w.train_tokens} tokens")
    if w.train_images:
        parts.append(f"data {w.train_images} images")
    if w.optimizer:
        parts.append(
            "adamw8bit"
            if w.optimizer == Optimizer.adamw_8bit
            else w.optimizer.value.replace("sgd_momentum", "sgd")
        )
    if w.gradient_checkpointing is not None:
        parts.append("gc" if w.gradient_checkpointing else "no-gc")
    if w.mixed_precision is not None:
        pure = w.weights_format if w.weights_format in ("fp16", "bf16") else "bf16"
        parts.append("amp" if w.mixed_precision else f"pure {pure}")
    if w.parallelism:
        parts.append(w.parallelism.value)
    if w.cpu_offload.value in ("optimizer", "params"):
        parts.append(f"offload {w.cpu_offload.value}")
    return parts


def _diffusion_parts(w: Workload) -> list[str]:
    """diffusers' memory knobs, in the words the knob recognizers read back."""
    parts = []
    if w.controlnets:
        parts.append(f"{w.controlnets} controlnet")
    if w.cpu_offload.value in ("model", "sequential"):
        parts.append(f"{w.cpu_offload.value} offload")
    if w.vae_slicing:
        parts.append("vae slicing")
    if w.vae_tiling:
        parts.append("vae tiling")
    if w.vae_per_frame:
        parts.append("perframe_ae")
    if w.decode_chunk_frames:
        parts.append(f"decode_chunk_size {w.decode_chunk_frames}")
    if w.split_mode:
        parts.append("split_mode")
    if not w.text_encoders_on_gpu:
        parts.append("t5 on cpu")
    if w.text_encoder_block_offload:
        parts.append("text encoder block_level")
    for params in w.text_encoders_params_b or []:
        parts.append(f"text encoder {params:g}b")
    if w.group_offload_blocks:
        parts.append(f"num_blocks_per_group {w.group_offload_blocks}")
    if w.group_offload_stream:
        parts.append("use_stream")
    if w.latents_cached:
        parts.append("cache_latents")
    if w.condition_cache_on_gpu:
        parts.append("offload_kv_cache=false")
    return parts


def _capability_line(p: ParsedQuery) -> str:
    """ "what can 2 gpus · on gpu:rtx-3090 run": a card's capability question, kept so a
    follow-up ("那换成4090呢") changes it (parse/followup.py)."""
    mine = "my " if p.owns_card else ""
    parts = [f"{p.gpu_count} gpus"] if p.gpu_count else []
    if p.gpu_id:
        parts.append(f"on {mine}gpu:{p.gpu_id}")
    elif p.vram_gib:
        parts.append(f"{mine}{p.vram_gib:g}gb vram")
    return " · ".join(["what can i run", *parts]) if parts else ""


def canonical_query(p: ParsedQuery) -> str:
    """`qwen2.5-7b · bf16 · inference · ctx 4096 · batch 1`: the parts in a fixed order,
    one function per group (the model and mode, the load, one input, the pipeline's and the
    training's switches, the stack, the cards and budget), so the line reads back as the
    same question."""
    w = p.workload
    if w is None:
        return _capability_line(p) if p.question_kind == "capability" else ""
    parts = (
        _model_parts(p, w)
        + _load_parts(w)
        + _input_parts(w)
        + _diffusion_parts(w)
        + _training_parts(w)
        + _stack_parts(p, w)
        + _card_parts(p)
    )
    return " · ".join(x for x in parts if x)


def _model_parts(p: ParsedQuery, w: Workload) -> list[str]:
    """The model (or the generic size or kind), its format and the mode word."""
    generic = f"{w.params_b:g}b" if w.params_b else (w.kind.value if w.kind else "")
    if w.model is None and p.unrecognized is not None:
        generic = p.unrecognized.detail  # "olmo2:7b" reads back as the same generic 7B, noted
    parts: list[str] = [w.model or generic]
    if w.weights_format:
        parts.append(w.weights_format)
    mode_word = _MODE_WORD[w.mode.value]
    if w.policy_mode is not None:  # "qlora dpo": the policy's recipe beside the method
        mode_word = f"{_MODE_WORD[w.policy_mode.value]} {mode_word}"
    if w.mode.is_training and w.runtime is not None and w.runtime.value in ("comfyui", "webui"):
        mode_word += " train"  # in an image UI "lora" alone is a LoRA loaded to generate
    parts.append(mode_word)
    return parts


def _load_parts(w: Workload) -> list[str]:
    """The context, the traffic (qps, users, concurrency) and the batch."""
    parts: list[str] = []
    ctx = w.seq_len if w.mode.is_training else w.context_tokens
    if ctx:
        parts.append(f"average ctx {ctx}" if w.context_average else f"ctx {ctx}")
    if w.qps:
        parts.append(f"qps {w.qps:g}")
    elif w.users and w.users_are_people:
        parts.append(f"{w.users} users")
    elif w.users:
        parts.append(f"concurrency {w.users}")
    elif w.concurrency:
        parts.append(f"concurrency {w.concurrency}")
    if w.batch_size:
        parts.append(f"batch {w.batch_size}")
    return parts


def _input_parts(w: Workload) -> list[str]:
    """One input's size: resolution, classes, images, frames; block swap and the text
    encoders' fp8."""
    parts: list[str] = []
    if w.image_width and w.image_height:
        parts.append(f"{w.image_width}x{w.image_height}")
    if w.num_classes:
        parts.append(f"{w.num_classes} classes")
    if w.images_per_prompt:
        parts.append(f"{w.images_per_prompt} images")
    if w.video_frames:
        parts.append(f"{w.video_frames} frames")
    if w.blocks_to_swap:
        parts.append(f"blocks_to_swap {w.blocks_to_swap}")
    if w.text_encoder_format == "fp8":
        parts.append("fp8 text encoder")
    return parts


def _stack_parts(p: ParsedQuery, w: Workload) -> list[str]:
    """The cards' count, attention, KV cache, static cache, detection switches, runtime and
    framework."""
    parts: list[str] = []
    # several laptops (parse.cards) as a count on the laptop part: it reads back as laptops
    count = p.gpu_count or (w.num_gpus if w.num_gpus > 1 else None) or p.laptops
    if count:
        parts.append(f"{count} gpus")
    if w.attention:
        parts.append(w.attention.value)
    if w.kv_cache_dtype:
        parts.append(f"kv {w.kv_cache_dtype}")
    if w.static_cache:
        parts.append("static cache")
    if w.plain_forward:
        parts.append("plain forward")
    if w.tuple_cache:
        parts.append("tuple cache")
    if w.chunked_loss is not None:
        parts.append("chunked loss" if w.chunked_loss else "standard cross-entropy")
    if w.torch_compile:
        parts.append("torch.compile")
    if w.classifier_head:
        parts.append("classification head")
    if w.multiscale_crop:
        parts.append("ms-crop")
    if w.objects_per_image:
        parts.append(f"max {w.objects_per_image} objects per image")
    if w.runtime:
        parts.append(_RUNTIME_WORD.get(w.runtime.value, w.runtime.value))
    if w.transformers_version:
        # the release beside its library's name, as a question writes it ("transformers 4.45")
        parts.append(f"transformers {w.transformers_version}")
    if w.cache_max_entry_count is not None:
        parts.append(f"cache-max-entry-count {w.cache_max_entry_count:g}")
    if w.framework and (w.runtime is None or w.framework != framework_of(w.runtime.value)):
        # the release beside its stack's name, as a question writes it ("unsloth 2024.1")
        parts.append(f"{w.framework} {w.unsloth_version}" if w.unsloth_version else w.framework)
    return parts


def _card_parts(p: ParsedQuery) -> list[str]:
    """The card named (the user's own or not), the others offered, the memory, the budget,
    the hours a day and the offload question."""
    parts: list[str] = []
    # "my": the card is the user's own (answers judge it instead of renting); a button
    # re-reads this line, so the ownership must read back with the card
    mine = "my " if p.owns_card else ""
    if p.gpu_id:
        parts.append(f"on {mine}gpu:{p.gpu_id}")
    for gpu_id, n in p.other_cards:
        parts.append(f"or {n}x gpu:{gpu_id}" if n else f"or gpu:{gpu_id}")
    if p.vram_gib:
        parts.append(f"{mine}{p.vram_gib:g}gb vram")
    if p.budget:
        sym = "¥" if p.budget.currency == "CNY" else "$"
        parts.append(
            f"{sym}{p.budget.amount:g}/h"
            if p.budget.per_hour
            else f"budget {sym}{p.budget.amount:g}"
        )
    if p.hours_per_day:
        parts.append(f"{p.hours_per_day:g}h a day")
    if p.ask_offload:
        parts.append("do i need offload")
    return parts
