"""Which changes the program the user named can make, and the ones only it offers.

A change is advice only where the named setup has it:

- Unsloth trains on one GPU with its own offloaded checkpoints: no ZeRO / FSDP sharding
  and no DeepSpeed optimizer or parameter offload ("FSDP with parameters offloaded to the
  CPU" was offered for a one-GPU Unsloth QLoRA). Its own levers are a shorter
  max_seq_length, batch 1 with gradient accumulation and use_gradient_checkpointing=
  "unsloth", all in fixes.setting_fixes / costlier_fixes (unslothai/unsloth README and
  docs "Unsloth Gradient Checkpointing", read 2026-12-07).
- A model run whole on one device (Whisper under openai-whisper, faster-whisper or a
  transformers pipeline; SAM's predictor and the other image encoders) is not split over
  cards: `whisper.load_model(device=...)`, CTranslate2's `WhisperModel(device_index=...)`
  (one replica per index) and segment-anything's `SamPredictor` put the whole model on one
  GPU. Its changes are a smaller model of its family and, for Whisper, faster-whisper in
  int8 (CTranslate2 docs/quantization.md: int8, int8_float16, int16, float16, bfloat16,
  float32; no AWQ/GPTQ/GGUF/fp8 types). openai-whisper has no quantized types at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from advisor import catalog
from advisor.memory.encoder import VISION_ENCODER_FAMILIES
from advisor.memory.runtimes.whisper import is_reference_whisper, own_kernels
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.parse import vocab

# Fix kinds Unsloth has no such thing for (one GPU, no ZeRO/FSDP, no DeepSpeed offload).
NOT_UNSLOTH = ("offload", "offload_params", "cards")
# The weight types CTranslate2 converts Whisper to (the one below 16 bits: int8).
CTRANSLATE2_TYPES = ("int8",)
FASTER_WHISPER = "faster-whisper"


def _spec(w: Workload) -> catalog.ModelSpec | None:
    return catalog.find_model(w.model) if w.model else None


def whole_model_family(w: Workload) -> bool:
    """A speech model or an image encoder at inference: run whole on one device."""
    spec = _spec(w)
    if spec is None or w.mode.is_training:
        return False
    speech = vocab.load("runtimes")["speech_families"]
    return spec.family in speech or spec.family in VISION_ENCODER_FAMILIES


def offered(code: str, w: Workload) -> bool:
    """Whether the change `code` is one the named setup can make."""
    kind, _, arg = code.partition(":")
    if (w.framework or "").lower() == "unsloth" and kind in NOT_UNSLOTH:
        return False
    if not whole_model_family(w):
        return True
    if kind in ("cards", "offload", "offload_params", "gpu_layers", "cpu_moe"):
        return False
    if kind == "quantize":
        if is_reference_whisper(w.framework):
            return False
        if own_kernels(w.framework) or _is_speech(w):
            return arg in CTRANSLATE2_TYPES and own_kernels(w.framework)
    return True


def _is_speech(w: Workload) -> bool:
    spec = _spec(w)
    return spec is not None and spec.family in vocab.load("runtimes")["speech_families"]


def own_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """A whole-model job's own changes: Whisper under faster-whisper in int8 (where it runs
    under another program), then the next smaller model of the family."""
    w = result.workload
    if not whole_model_family(w):
        return
    if _is_speech(w) and not own_kernels(w.framework):
        yield (
            "faster_whisper",
            partial(
                w.model_copy,
                update={"framework": FASTER_WHISPER, "runtime": None, "weights_format": "int8"},
            ),
        )
    for smaller in smaller_models(w):  # fixes_for keeps the largest that fits
        yield f"smaller_model:{smaller.name}", partial(w.model_copy, update={"model": smaller.id})


def smaller_models(w: Workload) -> list[catalog.ModelSpec]:
    """The catalog models of the same family with fewer parameters, largest first."""
    spec = _spec(w)
    if spec is None:
        return []
    same = [m for m in catalog.models().values() if m.family == spec.family]
    smaller = [m for m in same if m.params_b < spec.params_b * 0.9]
    return sorted(smaller, key=lambda m: -m.params_b)
