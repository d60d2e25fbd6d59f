"""Settings a measured case names only in its notes or quote (diffusers offload / slicing /
tiling, torchtune's chunked loss, optimizer in backward, activation offloading, precomputed
text embeddings, which pipeline components a quantizer touched), read by a fixed phrase
table: the same for every case, never keyed by case id, model name or source.
"""

from __future__ import annotations

import re

from advisor.models.choices import Kind

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


CHUNK_OFFLOAD_KNOBS = {"chunked_loss", "activation_offload", "torch_compile"}


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
