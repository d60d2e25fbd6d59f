"""Map a measured VRAM case (../shared/eval schema) onto a Workload.

The adapter maps each case's structured fields onto a Workload. Free-text fields are read
through fixed word tables (RUNTIME_WORDS, STACK_WORDS, DTYPES, OPTIMIZERS, PARALLEL), and
the few settings the schema has no field for from the case's `notes` by fixed phrase tables
(checks/note_knobs.py, checks/note_numbers.py) — the same for every case, never keyed by
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
from checks.note_knobs import knobs_from_text, mentioned
from checks.note_numbers import numbers_in_notes

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
    (r"(?<![a-z])ollama", "ollama"),
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
    # InternVL's own fine-tuning script (its shell scripts run internvl_chat_finetune.py
    # with the repository's DeepSpeed configs), as the bot reads the script's name
    (r"internvl_chat_finetune", "internvl"),
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
    "prodigy": "prodigy",
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


def guide_formula_bytes(case: dict) -> float:
    bits = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8}
    prec = case["workload"].get("weights_precision") or "fp16"
    b = bits.get(prec, 4 if any(x in prec for x in ("4", "nf4", "fp4")) else 8)
    return case["model"]["params_b"] * 1e9 * b / 8 * 1.2 / (case["workload"].get("num_gpus") or 1)
