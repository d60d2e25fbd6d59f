"""The numbers that size a language model's run: context and prompt length, batch, LoRA rank,
vLLM's memory share and transformers' static cache; and a bare parameter count ("7b",
"70亿") once model names have had their turn. The training knobs live in
advisor/parse/training_knobs.py, the image and video ones in advisor/parse/image_knobs.py."""

from __future__ import annotations

import re
from functools import cache

from advisor.audio_speed import default_batch
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan, number, reject

MAX_PARAMS_B = 20_000  # ~20T: beyond anything trained; larger is a typo


# Knob patterns built from vocab words, compiled once (as Scan.take would, case-blind).
@cache
def _knob_patterns() -> dict[str, re.Pattern[str]]:
    words = vocab.knob_words
    return {
        name: re.compile(pattern, re.I)
        for name, pattern in {
            # "1m" is a million tokens (Qwen2.5-1M's "1M-token context"); "满1m上下文", "full
            # 1M context": the word before the length is part of it (not a full fine-tune)
            "context": (
                rf"{words('context')}\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(k|m)?(?![a-z0-9])"
                r"(?!\s*[张块卡台])"  # "上下文 4张a100": a count of cards, not a length
            ),
            "context_after": (
                r"(?:(?:开满|满|full|whole|entire)\s*(?:the\s+)?)?"
                rf"(?<![\d.])(\d+(?:\.\d+)?)\s*(k|m)?\s*(?:tokens?\s*)?{words('context_after')}"
            ),
            "prompt": (
                rf"{words('prompt')}\s*(?:长度|length|of|是|为)?\s*[:=：]?\s*"
                r"(\d+(?:\.\d+)?)\s*(k)?\s*(?:个\s*)?tokens?\b"
            ),
            "prompt_after": (
                rf"(?<![\d.])(\d+(?:\.\d+)?)\s*(k)?[\s-]*(?:tokens?[\s-]*(?:的)?\s*{words('prompt')}"
                rf"|{words('prompt')}\s*tokens?\b)"
            ),
            "batch": rf"{words('batch')}\s*[:=：]?\s*(\d+)",
            # "bs4", "bs16": the short form glued to its number (the word edge above needs a
            # gap after "bs")
            "batch_glued": r"(?<![a-z0-9])bs(\d+)(?![a-z0-9.])",
            # "seq2048", "ctx8k": the length's short words glued to their number, as "bs4"
            "context_glued": r"(?<![a-z0-9])(?:seq_?len|seq|ctx)(\d+(?:\.\d+)?)(k)?(?![a-z0-9.])",
            "gpu_memory_utilization": (
                rf"(?:--)?{words('gpu_memory_utilization')}\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(%)?"
            ),
            "cache_max_entry_count": (
                rf"(?:--)?{words('cache_max_entry_count')}\s*[:=：]?\s*(\d*\.?\d+)\s*(%)?"
            ),
        }.items()
    }


def recognize_prompt_length(s: Scan, r: Reading) -> None:
    """ "输入30k token", "a 30k token prompt", "30k input tokens": the prompt's length, taken
    as the context asked (before recognize_data, which reads "30k tokens" as data)."""
    if "_ctx" in r.fields:
        return
    p = _knob_patterns()
    # "满1m上下文", "1M context": a context of a million tokens, before recognize_data reads
    # "1m" as a million training samples
    m, _ = s.take_if(p["context_after"], lambda m: (m.group(2) or "").lower() == "m")
    if m is not None:
        r.fields["_ctx"] = int(number(m.group(1)) * _CONTEXT_UNIT["m"])
        return
    if (m := s.take(p["prompt"])) or (m := s.take(p["prompt_after"])):
        r.fields["_ctx"] = int(number(m.group(1)) * (1024 if m.group(2) else 1))


# k: 1024 tokens as runtimes count them (128k = 131072); m: a million ("1M-token context",
# Qwen2.5-7B-Instruct-1M's max_position_embeddings 1010000)
_CONTEXT_UNIT = {"k": 1024, "m": 1_000_000}

# "平均上下文8k", "average context 8k", "8k context on average": the context is the
# average request's, said right before or after it
_AVERAGE_BEFORE = re.compile(r"(?:平均(?:的)?|average|avg\.?|mean|typical)\s*$", re.I)
_AVERAGE_AFTER = re.compile(r"^\s*(?:on\s+average|平均)", re.I)


def recognize_context(s: Scan, r: Reading) -> None:
    p = _knob_patterns()
    if (
        (m := s.take(p["context"]))
        or (m := s.take(p["context_after"]))
        or (m := s.take(p["context_glued"]))
    ):
        unit = (m.group(2) or "").lower()
        r.fields["_ctx"] = int(number(m.group(1)) * _CONTEXT_UNIT.get(unit, 1))
        before = _AVERAGE_BEFORE.search(s.text[max(0, m.start() - 12) : m.start()])
        after = _AVERAGE_AFTER.search(s.text[m.end() : m.end() + 16])
        if before or after:
            r.fields["context_average"] = True
            start = m.start() - 12 if m.start() >= 12 else 0
            word = (start + before.start(), start + before.end()) if before else None
            if after:
                word = (m.end() + after.start(), m.end() + after.end())
            if word is not None:
                s.take(re.escape(s.text[word[0] : word[1]].strip()))


# "batch" / "batched" / "批量" with no number after it ("batch_size 8" has one)
_BATCH_ALONE = re.compile(
    r"(?<![a-z0-9])(?:batched|batch)(?![\s_-]*(?:size)?\s*[:=：]?\s*\d)(?![a-z0-9_])"
    r"|批量(?!\s*\d)|批处理",
    re.I,
)


def recognize_batch(s: Scan, r: Reading) -> None:
    """A batch with its number first ("batch_size 8 批量转录" is batch 8); a speech model's
    "batch" / "批量" alone is batched transcription at the examples' batch, said so."""
    p = _knob_patterns()
    if (m := s.take(p["batch"])) or (m := s.take(p["batch_glued"])):
        r.fields["batch_size"] = int(m.group(1))
        if not 1 <= r.fields["batch_size"] <= 65_536:
            raise reject("bad_value", "batch_size")
        # a told batch replaces a program's own (WhisperX's 8)
        r.assumed[:] = [a for a in r.assumed if not a.startswith("speech_stack_batch = ")]
        s.take(_BATCH_ALONE)  # "批量转录": the batched mode the number already sets
        return
    speech = r.spec is not None and r.spec.family == "whisper"
    if speech and "batch_size" in r.fields:
        s.take(_BATCH_ALONE)  # "whisperx ... batched": the program's own batch, already set
    elif speech and s.take(_BATCH_ALONE):
        # "whisper large-v3 T4 batch": batched transcription at the batch the faster-whisper
        # and transformers examples pass (data/audio_speed.toml), said so
        r.fields["batch_size"] = default_batch()
        r.assumed.append(f"speech_batch = {default_batch()}")


def recognize_lora_rank(s: Scan, r: Reading) -> None:
    if m := s.take(r"(?:\b|(?<=_))(?:r|rank)\s*[:=]?\s*(\d{1,4})\b"):  # r=16, r 64, lora_r 8
        r.fields["lora_rank"] = int(m.group(1))


def recognize_size(s: Scan, r: Reading) -> None:
    """A bare parameter count (after model names: "qwen2.5-7b" is a name, "7b" a size)."""
    params_b: float | None = None
    if m := s.take(
        # a range of sizes ("7b-13b", "7b到14b", "7 to 13b"): sized for the larger, since
        # the smaller would leave the user short on the models they named
        r"(?<![a-z0-9.\-])(\d+(?:\.\d+)?)\s*b?\s*(?:-|~|～|到|至|to)\s*(\d+(?:\.\d+)?)\s*b\b"
    ):
        low, high = number(m.group(1)), number(m.group(2))
        if high > low:
            params_b = high
            r.assumed.append(f"size_range = {low:g}-{high:g}")
    if params_b is None and (
        m := s.take(r"(?<![\d.])(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*x\s*(\d+(?:\.\d+)?)\s*b\b")
    ):
        params_b = number(m.group(1)) * number(m.group(2))
    elif params_b is None and (
        m := s.take(
            # not the tail of a name ("lama3-8b" is a misspelt model, not an 8B one)
            r"(?<![a-z0-9.])(?<![a-z0-9.]-)(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*"
            r"(billion|bn|b|million|m|千亿|万亿|亿)(?![a-z])"
        )
    ):
        value, unit = number(m.group(1)), m.group(2)
        scale = {"m": 1e-3, "million": 1e-3, "亿": 0.1, "千亿": 100, "万亿": 1000}.get(unit, 1.0)
        params_b = value * scale
    if params_b is None and (
        m := s.take(
            r"(?<![\d.])10\s*(?:\^|\*\*)\s*(\d{1,4})\s*(?:个)?\s*(?:参数|params?|parameters)?"
        )
    ):
        exponent = int(m.group(1))
        if exponent > 15:  # beyond 10^15 parameters: no model is that size
            raise reject("bad_value", "params_b")
        params_b = 10.0**exponent / 1e9
    if params_b is None:
        return
    if params_b < 0 and m is not None and s.joined_before(m.start()):
        params_b = -params_b  # "foo-chat-7b" after "chat" was read: a hyphen, not a minus
    if 0 < params_b < 1e6:
        params_b = float(f"{params_b:.6g}")
    if not 0 < params_b <= MAX_PARAMS_B:
        raise reject("bad_value", "params_b")
    r.params_b = params_b


# Sequence lengths written as a bare number (powers of two, 256 to 128k tokens).
BARE_LENGTHS = frozenset(2**k for k in range(8, 18))


def _bare_length(m: re.Match[str]) -> int | None:
    n = int(m.group(1))
    return n if n in BARE_LENGTHS else None


_RESOLUTION_WORD = re.compile(r"(?:分辨率|resolution|res)\s*[:：=]?\s*$", re.IGNORECASE)


def _bare_side(m: re.Match[str]) -> int | None:
    """A bare number read as an image side only where latent models can take it: a multiple
    of 8 (the VAE's downscale, diffusers' pipelines round to it), or right after a word that
    says it is one ("分辨率2060"); "3050" alone is a card."""
    n = int(m.group(1))
    said = _RESOLUTION_WORD.search(m.string[max(0, m.start() - 12) : m.start()])
    return n if n % 8 == 0 or said else None


def recognize_bare_context(s: Scan, r: Reading) -> None:
    """ "128k" alone is a context; a bare 3-4 digit number next to an image model a resolution."""
    if "_ctx" not in r.fields and (m := s.take(r"\b(\d+(?:\.\d+)?)\s*k\b")):
        r.fields["_ctx"] = int(number(m.group(1)) * 1024)
    language = r.spec is not None and r.spec.kind.value == "llm"
    if language and "_ctx" not in r.fields:
        # "lora qwen2-7b bs4 2048 24g": a bare power of two on a language-model line is the
        # sequence length people write (256 … 128k); said as read, so a wrong reading shows
        m, n = s.take_if(r"(?<![\d.])(\d{3,6})(?![\d.])", _bare_length)
        if m is not None:
            r.fields["_ctx"] = n
            r.assumed.append(f"bare_length = {n}")
    if (
        r.spec is not None
        and r.spec.kind.value == "diffusion"
        and "image_width" not in r.fields
        and (m := s.take_if(r"\b(\d{3,4})\b", _bare_side)[0])
    ):
        r.fields["image_width"] = r.fields["image_height"] = int(m.group(1))


def recognize_gpu_memory_utilization(s: Scan, r: Reading) -> None:
    """vLLM's --gpu-memory-utilization (SGLang's --mem-fraction-static): a share of the card,
    0.9 or 90%."""
    if m := s.take(_knob_patterns()["gpu_memory_utilization"]):
        value = float(m.group(1)) / (100 if m.group(2) or float(m.group(1)) > 1 else 1)
        if not 0 < value <= 1:
            raise reject("bad_value", "gpu_memory_utilization")
        r.fields["gpu_memory_utilization"] = value


def recognize_cache_max_entry_count(s: Scan, r: Reading) -> None:
    """LMDeploy's --cache-max-entry-count: the share of the memory left after the weights
    its KV block pool takes at start, 0.5 or 50% (a count of blocks, 1 or more, is not
    read as a share: a bad value)."""
    if m := s.take(_knob_patterns()["cache_max_entry_count"]):
        value = float(m.group(1)) / (100 if m.group(2) else 1)
        if not 0 < value < 1:
            raise reject("bad_value", "cache_max_entry_count")
        r.fields["cache_max_entry_count"] = value
        r.fields.setdefault("runtime", "lmdeploy")


def recognize_static_cache(s: Scan, r: Reading) -> None:
    """transformers' static cache ("static cache", "cache_implementation=static", "静态缓存"):
    preallocated for the whole context before the prefill."""
    if s.take(vocab.knob_words("static_cache")):
        r.fields["static_cache"] = True
    # the user's own loop of forwards ("plain forward", "不用generate") and a cache handed
    # over as tuples ("to_legacy_cache"): full-prompt logits, a re-concatenated cache
    for field in ("plain_forward", "tuple_cache"):
        if s.take(vocab.knob_words(field)):
            r.fields[field] = True
