"""openai-whisper, the reference implementation: an fp32 model that computes in fp16
(`reference_format`), and a load that holds the fp16 checkpoint
and the fp32 model on the GPU at once (data/runtimes.toml [openai_whisper]).
faster-whisper (CTranslate2) and transformers keep the weights in the compute type, as the
transformers path counts them."""

from __future__ import annotations

from advisor.memory.runtimes import InferenceSetup, coefficient
from advisor.memory.terms import Breakdown, load_peak


def is_reference_whisper(framework: str | None) -> bool:
    return (framework or "").lower() in coefficient("openai_whisper", "frameworks")


def own_kernels(framework: str | None) -> bool:
    """A CTranslate2 program (faster-whisper): no PyTorch model, so the transformers path's
    runtime, attention and bf16 words do not describe what it runs."""
    return (framework or "").lower() in coefficient("ctranslate2", "frameworks")


def own_program(framework: str | None) -> bool:
    """A speech program that is not transformers (openai-whisper, faster-whisper): an
    answer's "runtime: transformers" does not describe it."""
    return is_reference_whisper(framework) or own_kernels(framework)


def reference_format(framework: str | None, fmt: str, acc: Breakdown) -> str:
    """The weights' format when the user gave none: fp32 under openai-whisper, CTranslate2's
    float16 under faster-whisper and WhisperX (data/runtimes.toml [ctranslate2]
    default_format), each stated in place of the usual default; else `fmt`."""
    if is_reference_whisper(framework):
        program = "fp32"
    elif own_kernels(framework):
        program = str(coefficient("ctranslate2", "default_format"))
    else:
        return fmt
    acc.assumed = [a for a in acc.assumed if a.field != "weights_format"]
    acc.assume("weights_format", program)
    return program


def load(s: InferenceSetup, acc: Breakdown, allocated: int) -> int:
    """load_model(): the fp16 checkpoint beside the fp32 model; the larger of that and the
    run's own peak."""
    params = s.model.params_b * 1e9 / s.split
    per_param = coefficient("openai_whisper", "resident_bytes_per_param") + coefficient(
        "openai_whisper", "checkpoint_bytes_per_param"
    )
    return load_peak(
        acc,
        allocated,
        params * per_param,
        note="load_model(): the fp16 checkpoint on the GPU beside the fp32 model (load peak)",
        key="weights.whisper_load",
    )
