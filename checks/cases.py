"""Map a measured VRAM case (../shared/eval schema) onto a Workload.

The adapter maps each case's structured fields onto a Workload. Free-text fields are read
through fixed word tables (RUNTIME_WORDS, STACK_WORDS, DTYPES, OPTIMIZERS, PARALLEL), and
the few settings the schema has no field for (diffusers offload/slicing/tiling, torchtune's
chunked loss, optimizer in backward, activation offloading, precomputed text embeddings,
which pipeline components a quantizer touched, frame counts, the transformers generation,
the vLLM profile batch and llama.cpp's micro-batch)
from the case's `notes` by fixed phrase tables — the same for every case, never keyed by
case id, model name or source.
"""

from __future__ import annotations

import re

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.models.architecture import Architecture
from advisor.models.choices import Kind
from advisor.models.workload import Workload
from advisor.parse.image_knobs import BARE_BLOCK_SWAP

# (regex on notes, workload field, value). Negated mentions ("no optimizer_in_bwd") are
# skipped by the lookbehind.
NOTE_KNOBS: list[tuple[str, str, object]] = [
    # Wan's own generate.py `--offload_model True`: the DiT leaves the card before the VAE
    # decode and the T5 after encoding, components in turn, as the bot reads it for a user
    # (advisor/data/vocab/runtimes.toml)
    (
        r"enable_model_cpu_offload|\bMODEL offload|--offload_model True|offload_model=True",
        "cpu_offload",
        "model",
    ),
    # diffusers' group offloading of the denoiser (enable_group_offload /
    # apply_group_offloading(transformer, ...)): a leaf or a block group at a time, read as
    # sequential offload as the bot reads "group offload" (advisor/data/vocab/runtimes.toml)
    (
        r"enable_sequential_cpu_offload|SEQUENTIAL offload|[Ss]equential \(per-submodule\) CPU"
        r"|enable_group_offload|apply_group_offloading\(transformer",
        "cpu_offload",
        "sequential",
    ),
    # the text encoder under block-level group offloading: onloaded whole while it encodes,
    # as the bot reads "text encoder ... block_level" (advisor/parse/group_offload.py te_block_level)
    (
        r"text encoder[^.;]{0,40}block-level group offload"
        r"|apply_group_offloading\(text_encoder[^)]*block_level",
        "text_encoder_block_offload",
        True,
    ),
    (r"(?<![Ss]equential )\bCPU offloading\b", "cpu_offload", "model"),
    (r"(?<!no )(enable_vae_slicing|VAE slicing)", "vae_slicing", True),
    (r"AutoencoderTiny|taesd", "tiny_vae", True),
    (
        r"text encoders? deleted|embeddings precomputed|prompt embeddings .*precomputed|only the transformer is on GPU"
        # A native pipeline's flag (Wan's --t5_cpu) that runs the text encoder on the CPU.
        r"|text encoders? runs? on the CPU|--t5_cpu\b",
        "text_encoders_on_gpu",
        False,
    ),
    (r"modules_to_save", "trainable_embeddings", True),
    # transformers' static cache, named as its API or described as preallocated before generating
    (
        r"cache_implementation\s*=\s*['\"]static|StaticCache|static (bf16 |fp16 )?KV cache|"
        r"cache (is )?preallocated|preallocated (KV )?cache",
        "static_cache",
        True,
    ),
    # transformers' torch_dtype for quantized weights, when the case states float32 (given, or
    # "auto" on a float32 checkpoint); "no torch_dtype" leaves the loader's default.
    (
        r"(?<!no )torch_dtype[ =]*'?(?:torch\.)?float32|torch_dtype 'auto' \(the checkpoint's own "
        r"dtype, float32",
        "load_dtype",
        "fp32",
    ),
    (
        r"(16-bit|bf16|fp16) weights (on|onto|to) the GPU before quantiz|load peak|"
        r"(loaded|loads) in (bf16|fp16|16-bit)[^.]*then quantiz",
        "quantize_after_load",
        True,
    ),
    # A standard loss stated where the stack's recipes would chunk it (torchtune before its
    # chunked losses), and torch.compile on, which changes what a chunked loss saves
    # (advisor/memory/stacks.py stack_loss_bytes); the bot reads both from a question
    # (advisor/data/vocab/words.toml [knobs] standard_loss, torch_compile).
    (r"standard (CE|cross-entropy)", "chunked_loss", False),
    (r"(?<!no )chunked (CE|cross-entropy)|CEWithChunkedOutputLoss", "chunked_loss", True),
    (r"\bcompile\b(?!\s*[:=]\s*False)", "torch_compile", True),
    # mmdet's multi-scale crop recipe, as its config names spell it ("ms-crop"), as the bot
    # reads it (advisor/data/vocab/words.toml multiscale_crop)
    (r"(?<![a-z])ms-crop\b|multi-scale crop", "multiscale_crop", True),
    (r"(?<!no )activation offloading|offloaded gradient checkpointing", "activation_offload", True),
    (
        r"(?<!no )optimizer_in_bwd(?!\s*=\s*False)|optimizer step fused into backward"
        r"|gradient_release\s*[=:]?\s*true",
        "optimizer_in_backward",
        True,
    ),
    (r"(?<!no )VAE tiling|enable_tiling", "vae_tiling", True),
    # lvdm's per-frame decode (perframe_ae=True), as the config spells it or in words.
    (r"perframe_ae\s*[=:]?\s*True|per-frame VAE decod", "vae_per_frame", True),
    # kohya sd-scripts' FLUX --split_mode (the DiT's halves take turns on the GPU).
    (r"--split_mode\b", "split_mode", True),
    # A trainer's latent cache (diffusers / kohya --cache_latents; not its --not_ switch).
    (r"(?<!not_)\bcache_latents\b|\blatents (are )?cached\b", "latents_cached", True),
    # A language model trained through a task head, not its LM head (the bot reads the same
    # setting from a question: advisor/data/vocab/words.toml [knobs] classifier_head).
    (
        r"ForSequenceClassification|without its LM head|\bno LM head|classification head",
        "classifier_head",
        True,
    ),
    # Liger kernels as each stack spells the switch (HF use_liger_kernel, LLaMA-Factory
    # enable_liger_kernel, ms-swift --use_liger_kernel) or names them.
    (
        r"(?<!no )(use_liger_kernel|enable_liger_kernel|[Ll]iger[ -]?[Kk]ernel)",
        "liger_kernel",
        True,
    ),
    (
        r"transformer \+ T5|T5 \+ transformer|text encoder \+ transformer|transformer and all "
        r"three text encoders|T5 encoder, transformer and VAE all quantized",
        "text_encoder_format",
        "weights",
    ),
    # kohya's HunyuanVideo fork --fp8-llm: the LLM text encoder in fp8 (the bot reads it
    # from a question the same way, advisor/parse/image_knobs.py recognize_text_encoder_format)
    (r"--fp8[-_]llm\b", "text_encoder_format", "fp8"),
    (
        r"on the transformer only|T5\S*( \([^)]*\))? and VAE (stay )?fp16",
        "text_encoder_format",
        "compute",
    ),
]

# What the case's free-text `framework` says, read by a fixed word table: the runtime
# that ran the model, and the training stack (first match wins).
RUNTIME_WORDS: list[tuple[str, str]] = [
    # ComfyUI and the WebUIs manage memory themselves, GGUF files included (the bot's
    # advisor/data/vocab/runtimes.toml [runtime.comfyui] / [runtime.webui])
    (r"comfy ?ui", "comfyui"),
    (r"stable diffusion webui|sd-webui|automatic1111|a1111|forge webui", "webui"),
    (r"vllm", "vllm"),
    (r"sglang", "sglang"),
    (r"llama\.?cpp|gguf", "llamacpp"),
    (r"ollama", "ollama"),
    (r"exllama", "exllamav2"),
    (r"lmdeploy|turbomind", "lmdeploy"),
    (r"diffusers|sample_video", "diffusers"),
    (r"transformers|optimum|peft|trl|torchtune|unsloth|torchtitan", "transformers"),
]
STACK_WORDS: list[tuple[str, str]] = [
    (r"exllama\s*\(?v1\b|exllamav1", "exllama-v1"),
    # rasbt/LLMs-from-scratch: its kv_cache models named right after it, else the default model
    (r"llms.from.scratch\W+kv.cache", "llms-from-scratch-kv"),
    (r"llms.from.scratch", "llms-from-scratch"),
    (r"autoawq", "autoawq"),
    (r"faster-whisper|ctranslate2|whisperx", "faster-whisper"),
    (r"openai-whisper|whisper \(pytorch", "openai-whisper"),
    (r"insanely-fast-whisper", "insanely-fast-whisper"),
    (r"detectron2", "detectron2"),
    (r"ultralytics", "ultralytics"),
    # ATorch wraps a transformers model (and PEFT's LoRA): its own name first
    (r"\batorch\b", "atorch"),
    (r"torchtune", "torchtune"),
    (r"torchtitan", "torchtitan"),
    (r"litgpt", "litgpt"),
    (r"unsloth", "unsloth"),
    (r"axolotl", "axolotl"),
    (r"mmdet", "mmdetection"),
    # MMAction2 (video recognition on mmcv) is not a segmentation stack: its own name, as the
    # bot reads it (advisor/data/vocab/runtimes.toml [stack])
    (r"mmaction", "mmaction2"),
    (r"mmseg|mmcv", "mmsegmentation"),
    # the image / video LoRA trainers, as the bot's word table names them
    # (advisor/data/vocab/runtimes.toml [framework])
    (r"kohya|sd-scripts|musubi", "kohya"),
    (r"finetrainers", "finetrainers"),
    (r"ai-toolkit", "ai-toolkit"),
    (r"peft|trl", "peft"),
    (r"optimum", "optimum"),
    (r"deepspeed", "deepspeed"),
    (r"transformers", "transformers"),
    # DINOv2's own code (torch.hub.load('facebookresearch/dinov2', ...)), after transformers:
    # transformers' Dinov2Model is transformers' code.
    (r"dinov2", "dinov2"),
]
# The data set a segmentation case names (its model name's parenthesis, "DeepLabV3+ R-50-D8
# (ADE20K)") and the classes its configs train (mmsegmentation configs/_base_/models and
# datasets: ADE20K 150, Cityscapes 19, Pascal VOC 21, Pascal Context 60, COCO-Stuff 171).
DATASET_CLASSES: list[tuple[str, int]] = [
    (r"ade-?20k", 150),
    (r"cityscapes", 19),
    (r"pascal.?context", 60),
    (r"coco.?stuff", 171),
    (r"\bvoc\b|pascal voc", 21),
]
UNKNOWN_STACK = "other"
CHUNK_OFFLOAD_KNOBS = {"chunked_loss", "activation_offload", "torch_compile"}
# xformers' memory_efficient_attention never materializes the scores (its kernels tile them,
# as FlashAttention does): read as flash, as a user's "xformers" is (advisor/parse/training_knobs.py).
ATTENTION_WORDS = [
    (r"flash", "flash"),
    (r"xformers|memory[_ -]efficient", "flash"),
    (r"eager", "eager"),
    (r"sdpa", "sdpa"),
    (r"slic", "sliced"),
]
# Schema fields that map one to one onto Workload fields of the same name.
SAME_NAME_FIELDS = (
    "batch_size",
    "prompt_tokens",
    "new_tokens",
    "seq_len",
    "image_width",
    "image_height",
    "images_per_prompt",
    "denoise_steps",
    "lora_rank",
    "lora_targets",
    "gradient_accumulation",
)
DTYPES = {"f16": "fp16", "fp8+bf16": "bf16", "f32": "fp32"}

OPTIMIZERS = {
    "adamw": "adamw",
    "adam": "adamw",
    "lora-fa": "adamw",
    "adamw_8bit": "adamw_8bit",
    # kohya sd-scripts' --optimizer_type spelling (AdamW8bit), read by the bot the same way
    "adamw8bit": "adamw_8bit",
    "paged_adamw_8bit": "paged_adamw_8bit",
    "adafactor": "adafactor",
    "sgd": "sgd",
    "sgd_momentum": "sgd_momentum",
    "lion": "lion",
}
PARALLEL = {
    "none": "none",
    "fsdp": "fsdp",
    "tp": "tp",
    "pp": "pp",
    "ddp": "ddp",
    "zero1": "zero1",
    "zero2": "zero2",
    "zero3": "zero3",
    "deepspeed-zero3": "zero3",
    "fsdp+tp": "fsdp",
    "fsdp+tp+pp": "fsdp",
}


# A mention the text denies: "(no --t5_cpu)", "without VAE tiling", "not cache_latents".
NEGATION = re.compile(r"(?:\bno|\bnot|\bwithout|\bnever)[ `'\"(]*$", re.I)
# Of two offload modes a case names, the one that keeps less on the GPU is the one it ran
# ("enable_sequential_cpu_offload" together with a pipeline's own cpu_offloading=True):
# sequential offload streams every submodule, model offload keeps a component resident.
OFFLOAD_RANK = {"model": 1, "sequential": 2}


def mentioned(pattern: str, text: str) -> bool:
    """Whether the text names the setting: a match not preceded by a negation."""
    return any(
        not NEGATION.search(text[max(0, m.start() - 12) : m.start()])
        for m in re.finditer(pattern, text)
    )


def _first(table: list[tuple[str, str]], text: str) -> str | None:
    return next((v for pattern, v in table if re.search(pattern, text, re.I)), None)


def stack(text: str) -> str | None:
    """The training or inference stack a case's `framework` names. A stack neither word
    table knows (a model repository's own script, a from-scratch implementation) is
    `UNKNOWN_STACK`: the engine estimates it as the runtime it resembles, and its band is the
    one measured on stacks the engine does not follow (advisor/data/band.toml [unmodelled])."""
    if found := _first(STACK_WORDS, text):
        return found
    if text.strip() and _first(RUNTIME_WORDS, text) is None:
        return UNKNOWN_STACK
    return None


def case_to_workload(case: dict) -> tuple[Workload, list[str]]:
    if case.get("engine_workload"):
        # A report exported by the bot (python -m bot export-measurements): the workload as
        # the engine read the question, which the schema's fields cannot always express.
        return Workload.model_validate(case["engine_workload"]), []
    m = case["model"]
    spec = find_spec(m)
    kind = Kind.llm
    if case["category"].startswith("diffusion"):
        kind = Kind.diffusion
    elif case["category"].startswith("classic"):
        kind = Kind.classic
    arch = case_arch(m, spec) if kind != Kind.diffusion else None
    fields = structured_fields(case, spec, kind, arch)
    notes = case.get("notes") or ""
    knobs = knobs_from_text(case, kind, fields)
    fields.update(numbers_in_notes(notes, fields))
    diffusion = spec.diffusion if spec is not None else None
    # a block swap whose count is not given: the most the script allows, as the bot reads a
    # bare "block swap" (advisor/parse/image_knobs.py recognize_block_swap)
    bare_swap = "blocks_to_swap" not in fields and mentioned(BARE_BLOCK_SWAP, notes)
    if bare_swap and diffusion is not None and diffusion.most_swapped:
        fields["blocks_to_swap"] = diffusion.most_swapped
    if kind == Kind.diffusion and spec is None:
        fields["kind"] = Kind.llm if arch is not None else Kind.diffusion
    return Workload(**{k: v for k, v in fields.items() if v is not None}), knobs


def find_spec(m: dict) -> ModelSpec | None:
    # "PSPNet R-50-D8 (Cityscapes)": the parenthesis names the data set, not the model.
    spec = catalog.find_model(re.sub(r"\s*\([^)]*\)$", "", m.get("name") or ""))
    if spec is None and m.get("name"):
        # A quantized or re-uploaded checkpoint (TheBloke/...-GPTQ) names its base model.
        base = re.sub(r"(?i)[-_](gptq|awq|gguf|bnb.*|4bit|8bit)$", "", m["name"].split("/")[-1])
        spec = catalog.find_model(base)
    return spec


def case_arch(m: dict, spec: ModelSpec | None) -> Architecture | None:
    """The case's config.json fields over the catalog's (sliding window, MLA, ...)."""
    arch_raw = {k: v for k, v in (m.get("arch") or {}).items() if v is not None and k != "source"}
    if not {"layers", "hidden", "heads"} <= arch_raw.keys():
        return None
    base = spec.arch.model_dump() if spec is not None and spec.arch is not None else {}
    if base and (
        arch_raw.get("kv_heads", base.get("kv_heads")) != base.get("kv_heads")
        or arch_raw.get("intermediate", base.get("intermediate")) != base.get("intermediate")
    ):
        # Another shape than the catalog entry it was matched to (THUDM/chatglm-6b, read as
        # ChatGLM3-6B by alias) is another model: the catalog's flags for its modeling code
        # do not carry.
        base.update(fused_gate_up=False, stacked_prefill_cache=False)
    base.update(
        layers=arch_raw["layers"],
        hidden=arch_raw["hidden"],
        heads=arch_raw["heads"],
        kv_heads=arch_raw.get("kv_heads"),
        head_dim=arch_raw.get("head_dim"),
        intermediate=arch_raw.get("intermediate"),
        vocab=arch_raw.get("vocab", base.get("vocab", 32000)),
    )
    if arch_raw.get("experts"):
        # The schema's `intermediate` of an MoE model is the expert width.
        base.update(
            experts=arch_raw["experts"],
            experts_per_token=arch_raw.get("experts_per_token"),
            moe_intermediate=base.get("moe_intermediate") or arch_raw.get("intermediate"),
        )
    return Architecture(**base)


def structured_fields(
    case: dict, spec: ModelSpec | None, kind: Kind, arch: Architecture | None
) -> dict:
    """The schema's own fields, normalized through the word tables."""
    m, wl = case["model"], case["workload"]
    fields: dict = {
        "kind": kind,
        "model": spec.id if spec is not None else None,
        "params_b": None if (spec is not None and kind == Kind.diffusion) else m["params_b"],
        "active_params_b": m.get("active_params_b"),
        "arch": arch,
        "mode": wl["mode"],
        "weights_format": DTYPES.get(wl.get("weights_precision"), wl.get("weights_precision")),
        "compute_dtype": DTYPES.get(wl.get("compute_dtype"), wl.get("compute_dtype")),
        "mixed_precision": wl.get("mixed_precision"),
        "optimizer": OPTIMIZERS.get(str(wl.get("optimizer")).lower().replace("-", "_"))
        if wl.get("optimizer")
        else None,
        "gradient_checkpointing": bool(wl["gradient_checkpointing"])
        if wl.get("gradient_checkpointing") is not None
        else None,
        "selective_checkpointing": "selective" in str(wl.get("gradient_checkpointing")),
        "attention": _first(ATTENTION_WORDS, str(wl.get("attention") or "")),
        "num_gpus": wl.get("num_gpus") or 1,
        "parallelism": PARALLEL.get(str(wl.get("parallelism") or "none").lower()),
        "kv_cache_dtype": DTYPES.get(wl.get("kv_cache_dtype"), wl.get("kv_cache_dtype")),
        "framework": stack(wl.get("framework") or ""),
        "runtime": _first(RUNTIME_WORDS, wl.get("framework") or ""),
    }
    fields.update({key: wl.get(key) for key in SAME_NAME_FIELDS})
    if kind == Kind.classic:
        dataset = re.search(r"\(([^)]*)\)\s*$", m.get("name") or "")
        fields["num_classes"] = _first(DATASET_CLASSES, dataset.group(1)) if dataset else None
    par = str(wl.get("parallelism") or "")
    if "+tp" in par:
        # The quote names the degrees ("FSDP 32, TP 8"); without one, TP 8 inside a node.
        m_tp = re.search(r"TP\s*(\d+)", case.get("quote") or "")
        fields["tensor_parallel"] = int(m_tp.group(1)) if m_tp else 8
    if "+pp" in par:
        m_pp = re.search(r"PP\s*(\d+)", case.get("quote") or "")
        fields["pipeline_parallel"] = int(m_pp.group(1)) if m_pp else 8
    if fields["mode"] == "inference" and wl.get("seq_len") and not wl.get("prompt_tokens"):
        fields["context_tokens"] = wl["seq_len"]
    if wl.get("cpu_offload"):
        fields["cpu_offload"] = (
            "params" if fields["parallelism"] in ("fsdp", "zero3") else "optimizer"
        )
    return fields


def knobs_from_text(case: dict, kind: Kind, fields: dict) -> list[str]:
    """Settings named only in the notes or the quote, by the fixed phrase table; the quote
    is read too, since a table row's label ("4Bit + CPU offloading + VAE tiling") can be
    the only place a setting is named."""
    wl = case["workload"]
    text = f"{case.get('notes') or ''} {case.get('quote') or ''}"
    knobs: list[str] = []
    for pattern, field, value in NOTE_KNOBS:
        # Offload modes here are diffusers' (inference).
        if field == "cpu_offload" and (kind != Kind.diffusion or wl["mode"] != "inference"):
            continue
        # Chunked losses and activation offloading are torchtune / Unsloth features; an HF
        # row's notes may describe them only to contrast the two.
        if field in CHUNK_OFFLOAD_KNOBS and fields.get("framework") not in ("torchtune", "unsloth"):
            continue
        if mentioned(pattern, text):
            ranked = field == "cpu_offload" and isinstance(value, str)
            if ranked and OFFLOAD_RANK.get(str(fields.get(field)), 0) > OFFLOAD_RANK[str(value)]:
                continue
            if value == "compute":
                value = wl.get("compute_dtype") or "fp16"
            elif value == "weights":
                value = wl.get("weights_precision")
            fields[field] = value
            knobs.append(f"{field}={value}")
    return knobs


MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _unsloth_release(notes: str) -> dict:
    """The Unsloth release a source ran: named ("Unsloth 2024.1"), else the month it is dated
    by, since Unsloth's releases are year.month ("(January 2024)" -> 2024.1), as the bot
    reads "unsloth 2024.1" from a question (advisor/parse/training_knobs.py)."""
    if m := re.search(r"[Uu]nsloth[ =v]*(20\d\d\.\d{1,2})\b", notes):
        return {"unsloth_version": m.group(1)}
    if m := re.search(rf"\b({'|'.join(MONTHS)}) (20\d\d)\b", notes):
        return {"unsloth_version": f"{m.group(2)}.{MONTHS.index(m.group(1)) + 1}"}
    return {}


def numbers_in_notes(notes: str, fields: dict) -> dict:
    """Settings the schema has no field for but every source of that kind states in its
    notes: the frame count of a video, how many layers' MoE experts llama.cpp kept on the
    host (its --n-cpu-moe), and the transformers release (tuple KV cache before 4.36,
    full-prompt logits before 4.45; sources from 2023 that name no version: legacy), and
    the blocks a block swap keeps on the CPU."""
    out: dict = {}
    if m := re.search(r"(\d+) frames", notes):
        out["video_frames"] = int(m.group(1))
    elif re.search(r"\b(?:one|a single|single)[ -]frame\b", notes):
        # a video model trained on an image folder: each image a one-frame video
        out["video_frames"] = 1
    # kohya sd-scripts / musubi-tuner / kohya's HunyuanVideo fork block swap, as the bot
    # reads it from a question (advisor/parse/image_knobs.py recognize_block_swap).
    if m := re.search(r"--blocks?[_-]to[_-]swap[ =]+(\d+)", notes):
        out["blocks_to_swap"] = int(m.group(1))
    # diffusers' block-level group offloading of the denoiser, as the bot reads it
    # (advisor/parse/group_offload.py group_blocks, use_stream); the text encoder's own group size
    # is not the denoiser's.
    call = re.search(r"apply_group_offloading\(transformer[^)]*\)", notes)
    if call and (m := re.search(r"num_blocks_per_group\s*=\s*(\d+)", call.group(0))):
        out["group_offload_blocks"] = int(m.group(1))
        out["group_offload_stream"] = "use_stream=True" in call.group(0)
    if m := re.search(r"(\d+) of \d+ layers' experts on host", notes):
        out["n_cpu_moe"] = int(m.group(1))
    # Serving-engine settings a start-up log states and the schema has no field for: the
    # profile batch vLLM ran (V0 without chunked prefill profiles max_model_len tokens and
    # max_num_seqs 256 rows, not the V1 defaults) and llama.cpp's micro-batch.
    for setting in ("max_num_batched_tokens", "max_num_seqs", "n_ubatch"):
        if m := re.search(rf"\b{setting}[ =:]+(\d+)", notes):
            out[setting] = int(m.group(1))
    # LMDeploy's KV pool share, as the bot reads it (advisor/parse/knobs.py)
    share = re.search(r"cache[-_]max[-_]entry[-_]count[ =:]+(0?\.\d+)", notes)
    if fields.get("runtime") == "lmdeploy" and share:
        out["cache_max_entry_count"] = float(share.group(1))
    # vLLM's sampler sorted the vocabulary for top-k/top-p in V0 and in V1 until the Triton
    # kernel of February 2026 (vLLM PR #33538); start-up logs that name the engine and date
    # it say which. The v0.19 logs (April 2026) are after it.
    serving = fields.get("runtime") == "vllm"
    if serving and re.search(r"V0 engine|V1 engine \((?:[A-Z][a-z]+ )?202[45]\b", notes):
        out["vllm_sort_sampler"] = True
    if fields.get("framework") == "unsloth":
        out.update(_unsloth_release(notes))
    if fields.get("mode") == "inference" and fields.get("runtime") == "transformers":
        version = re.search(r"[Tt]ransformers (\d+)\.(\d+)", notes)
        if version:
            # the release says which generation (advisor/memory/runtimes/transformers.py)
            out["transformers_version"] = f"{version.group(1)}.{version.group(2)}"
        elif re.search(
            r"2023|PyTorch (1\.|2\.0)|auto-gptq|cache concatenation|benchmark_gptq", notes
        ):
            # Undated sources: the year, the PyTorch release, AutoGPTQ (2023-early 2024),
            # optimum's benchmark_gptq.py (written for transformers 4.32, Aug 2023) or the
            # concatenating cache itself place them before transformers 4.36.
            out["legacy_generate"] = True
    return out


def guide_formula_bytes(case: dict) -> float:
    bits = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8}
    prec = case["workload"].get("weights_precision") or "fp16"
    b = bits.get(prec, 4 if any(x in prec for x in ("4", "nf4", "fp4")) else 8)
    return case["model"]["params_b"] * 1e9 * b / 8 * 1.2 / (case["workload"].get("num_gpus") or 1)
