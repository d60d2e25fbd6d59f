"""One line of Chinese, English or mixed text -> a Workload, or a parse error with a hint.

Generous with what it accepts, strict about what it does not understand: every span it
uses is listed in `understood`, every leftover word in `ignored`, every default it picks
in `assumed`. Recognizers (one small function per kind of span, vocabularies in
advisor/data/vocab/*.toml) run in the order declared in RECOGNIZERS; each consumes its span
so a number is never read twice (the "2" of "2卡" is cards, not a batch size).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import ValidationError

from advisor.catalog import catalog_version
from advisor.memo import Memo
from advisor.parse import (
    budget,
    cards,
    group_offload,
    hub_names,
    image_knobs,
    knobs,
    named_encoders,
    names,
    outside,
    quant,
    question,
    releases,
    stack,
    tasks,
    training_knobs,
    vram,
)
from advisor.parse.assemble import ParsedQuery, assemble, leftovers
from advisor.parse.canonical import canonical_query
from advisor.parse.scan import Budget, ParseError, Reading, Rejected, Scan, normalize

MAX_QUERY_CHARS = 500

Recognizer = Callable[[Scan, Reading], None]

# The order is the grammar: budgets before sizes ("3元/小时"), names with their own
# suffixes (repo ids, .gguf files, Ollama tags) before cards and formats, cards before
# counts, model names before bare sizes ("qwen2.5-7b" is a name, "7b" a size), KV-cache and
# 8-bit-optimizer words before formats, data sizes before parameter counts ("30m tokens").
RECOGNIZERS: tuple[Recognizer, ...] = (
    training_knobs.recognize_stack_release,  # the release's "2024.1" before any number reads it
    budget.recognize_budget,
    budget.recognize_hours_per_day,  # before the sizes and counts read "8" of "每天8小时"
    tasks.recognize_ask_fit,  # before names and modes: "能跑什么模型" names no model
    names.recognize_not_estimated,
    hub_names.recognize_repo_id,
    hub_names.recognize_gguf_file,
    hub_names.recognize_ollama_tag,
    tasks.recognize_no_adapter,  # before the stack ("peft") and the modes ("lora")
    cards.recognize_cards,
    vram.recognize_vram,
    stack.recognize_trainer_script,  # "train_dreambooth_lora_flux": before the names
    stack.recognize_kohya_script,  # "sdxl_train.py": before the names
    stack.recognize_runtime,  # before names: "sd webui sdxl" is WebUI running SDXL
    stack.recognize_platform_words,  # after the cards: "rocm" beside a Radeon
    stack.recognize_speech_stack,  # before names: "openai-whisper large-v3"
    named_encoders.recognize_named_encoders,  # before names: the encoder is not the model
    names.recognize_distill,
    names.recognize_phrase,
    names.recognize_catalog_name,
    names.recognize_family,
    releases.recognize_new_release,  # "qwen3.5 397b": a known line's release the catalog lacks
    outside.recognize_outside,  # "qwen2-vl-72b", "Tarsier-34b": an older release it lacks
    image_knobs.recognize_text_encoder_format,  # before formats: "--fp8-llm" is not the weights'
    image_knobs.recognize_condition_cache,  # "offload_kv_cache=False": before the kv cache
    quant.recognize_kv_cache,
    quant.recognize_8bit_optimizer,
    stack.recognize_precision_recipe,
    quant.recognize_quant_words,
    quant.recognize_exl2,
    knobs.recognize_gpu_memory_utilization,
    knobs.recognize_cache_max_entry_count,
    knobs.recognize_static_cache,
    training_knobs.recognize_loss_knobs,
    training_knobs.recognize_multiscale_crop,
    training_knobs.recognize_objects_per_image,
    stack.recognize_stack,
    stack.recognize_parallelism,
    stack.recognize_offload_question,  # "要开offload吗": before the offload word
    stack.recognize_offload,
    quant.recognize_formats,
    quant.recognize_quant_backend,
    quant.recognize_vague_quant,
    knobs.recognize_prompt_length,  # before data: "输入30k token" is a prompt
    training_knobs.recognize_data,
    training_knobs.recognize_schedule,  # "1x": a detection schedule's epochs
    image_knobs.recognize_dataset,
    knobs.recognize_context,
    stack.recognize_concurrency,
    knobs.recognize_batch,
    training_knobs.recognize_classes,
    training_knobs.recognize_lora_targets,  # before the rank: "q_proj" holds no rank
    knobs.recognize_lora_rank,
    image_knobs.recognize_resolution,
    image_knobs.recognize_diffusion_knobs,
    group_offload.recognize_group_offload,
    image_knobs.recognize_images,
    image_knobs.recognize_decode_chunk,  # "decode 2 frames at a time": before the frames
    image_knobs.recognize_frames,
    image_knobs.recognize_clip_seconds,
    image_knobs.recognize_block_swap,
    training_knobs.recognize_training_knobs,
    tasks.recognize_mode,
    tasks.recognize_kind,
    question.recognize_question_kind,  # after the names and runtimes ("llama-server")
    names.recognize_unrecognized_name,  # "olmo2 7b": a size, and a name the catalog lacks
    knobs.recognize_size,
    knobs.recognize_bare_context,
)


def read(text: str) -> tuple[Scan, Reading]:
    """Run every recognizer over one normalized line. Raises Rejected on a user error."""
    s = Scan(normalize(text).lower())
    # a leading /vram or /vram@BotName, blanked so positions match the original text
    s.text = re.sub(r"^/\w+(@\w+)?", lambda m: " " * len(m.group(0)), s.text)
    r = Reading()
    for recognize in RECOGNIZERS:
        recognize(s, r)
    return s, r


# Parses by line: the wizard re-reads its draft at every step, groups ask the same lines, and
# an unknown name's suggestions (difflib over the catalog) cost tens of milliseconds.
_PARSES: Memo[ParsedQuery] = Memo("parse", 2048)


def parse_query(text: str) -> ParsedQuery:
    """Parse one line. Never raises: bad input comes back as `error`. Memoized (advisor.memo):
    the result is shared, so change it only through `model_copy`."""
    return _PARSES.get((catalog_version(), text), lambda: _parse_query(text))


def _parse_query(text: str) -> ParsedQuery:
    if text is None or not text.strip():
        return ParsedQuery(error=ParseError(code="empty"))
    if len(text) > MAX_QUERY_CHARS:
        return ParsedQuery(error=ParseError(code="too_long", detail=str(MAX_QUERY_CHARS)))
    s = None
    try:
        s, r = read(text)
        return assemble(s, r)
    except Rejected as exc:
        if exc.error.code == "no_model" and s is not None:
            return ParsedQuery(error=exc.error, understood=s.understood, ignored=leftovers(s))
        return ParsedQuery(error=exc.error)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "query"
        return ParsedQuery(error=ParseError(code="bad_value", detail=loc))
    except (ValueError, OverflowError) as exc:
        return ParsedQuery(error=ParseError(code="bad_value", detail=str(exc)[:80]))


def parse_budget(text: str) -> Budget | None:
    """A budget alone ("¥10/h", "budget $100"), read as parse_query reads one."""
    return budget.take_budget(Scan(normalize(text).lower()))


__all__ = [
    "MAX_QUERY_CHARS",
    "RECOGNIZERS",
    "Budget",
    "ParseError",
    "ParsedQuery",
    "canonical_query",
    "parse_budget",
    "parse_query",
    "read",
]
