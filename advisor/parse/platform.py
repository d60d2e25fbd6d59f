"""The runtime a card's owners use when the line names none, where that is not the usual
CUDA stack (data/architectures.toml): an LLM on a Mac or a Pascal card is answered for
llama.cpp / Ollama and its GGUF files; Whisper (kind "llm" in the catalog, a text decoder,
but no program llama.cpp or Ollama serves) keeps its own programs, and on a Pascal card
faster-whisper runs int8 (CTranslate2 has no float16 there). A bare "量化" / "quantized"
is the 4-bit file of the runtime the line implies (`vague_quant_runtime`). Each choice is
said as an assumption; a runtime, a framework or a non-GGUF format the user names is kept."""

from __future__ import annotations

from typing import Any

from advisor import catalog
from advisor.architectures import ArchSpec, architecture_of
from advisor.memory.runtimes import is_gguf
from advisor.models.choices import Kind
from advisor.parse import vocab


def platform_runtime(
    fields: dict[str, Any],
    gpu_id: str | None,
    kind: Kind | None,
    family: str | None,
    mode: str,
    assumed: list[str],
) -> None:
    """An LLM run on a card whose owners use llama.cpp when they name no runtime (Apple
    Silicon: no CUDA, so no transformers-on-CUDA, vLLM or bitsandbytes; a Pascal P40 / GTX 10xx:
    fp16 at 1/64 rate, no vLLM): answered for llama.cpp / Ollama and its GGUF files
    (data/architectures.toml `llm_runtime`). Speech models: `speech_runtime` below."""
    if mode != "inference" or kind not in (None, Kind.llm) or gpu_id is None:
        return
    arch = architecture_of(catalog.gpus().get(gpu_id))
    if arch is None:
        return
    if family in vocab.load("runtimes")["speech_families"]:
        speech_runtime(fields, arch, assumed)
        return
    if fields.get("runtime") or fields.get("framework"):
        return
    named = fields.get("weights_format")
    if named and not is_gguf(str(named)):
        # "chatglm-6b-int4 … 1080ti": a checkpoint in a format GGUF files do not have is
        # run where it was made (transformers); GGUF types and no format go to llama.cpp
        return
    if arch.llm_runtime != "llamacpp":
        return
    fields["runtime"] = "llamacpp"
    assumed.append(f"runtime_on_{arch.id.split('-')[0]} = llama.cpp")


def vague_quant_runtime(
    fields: dict[str, Any],
    kind: Kind | None,
    family: str | None,
    mode: str,
    served: bool,
    assumed: list[str],
) -> None:
    """ "70b 量化 两张4090": "quantized" with no format or bits, on an LLM run for inference,
    is the 4-bit file of the runtime the line implies (vocab/quant.toml [vague]): one user
    with no runtime named, or a GGUF runtime named, runs llama.cpp / Ollama's GGUF Q4_K_M;
    many users (`served`) or a serving engine named, an AWQ checkpoint under vLLM. Another
    runtime named (transformers, ExLlamaV2, MLX) keeps the generic 4-bit it was read as."""
    if "quantized = 4-bit" not in assumed or mode != "inference" or kind not in (None, Kind.llm):
        return
    if family in vocab.load("runtimes")["speech_families"]:
        return
    vague = vocab.load("quant")["vague"]
    runtime = str(getattr(fields.get("runtime"), "value", fields.get("runtime") or ""))
    named = runtime or fields.get("framework")
    if runtime in vague["served_runtimes"] or (served and not named):
        fmt, key = vague["served_format"], "quantized_served"
    elif runtime in vocab.load("runtimes")["gguf_runtimes"] or not named:
        fmt, key = vague["local_format"], "quantized_local"
        fields.setdefault("runtime", vague["local_runtime"])
    else:
        return
    fields["weights_format"] = fmt
    shown = fmt.upper().removesuffix("-4BIT")  # Q4_K_M, AWQ
    assumed[assumed.index("quantized = 4-bit")] = f"{key} = {shown}"


def speech_runtime(fields: dict[str, Any], arch: ArchSpec, assumed: list[str]) -> None:
    """Whisper on a card with a speech runtime of its own (`speech_runtime`, Pascal:
    faster-whisper int8) when none is named; and faster-whisper's weights in the type
    CTranslate2 converts them to on this card (`ctranslate2_fallback`: float16 runs as
    float32 on compute capability 6.x), so the memory is not counted at half."""
    if not (fields.get("runtime") or fields.get("framework")) and arch.speech_runtime:
        fields["framework"] = arch.speech_runtime
        words = arch.speech_runtime
        if "weights_format" not in fields and arch.speech_format:
            fields["weights_format"] = arch.speech_format
            words += f" {arch.speech_format}"
        assumed.append(f"speech_runtime_on_{arch.id.split('-')[0]} = {words}")
    if fields.get("framework") != "faster-whisper":
        return
    asked = str(fields.get("weights_format") or "fp16")
    fallback = arch.ctranslate2_fallback.get(asked)
    if fallback is not None:
        fields["weights_format"] = fallback
        assumed.append(f"ctranslate_fallback = {asked.upper()} → {fallback.upper()}")
    # what is not quantized (the cache, the activations) runs in the card's float type:
    # int8 on compute capability 6.1 is int8_float32
    float_type = arch.ctranslate2_fallback.get("fp16")
    if float_type is not None and "kv_cache_dtype" not in fields:
        fields["kv_cache_dtype"] = float_type
