"""What a card's architecture can run (data/architectures.toml): the LLM runtime its owners
use when they name none, its compute stack's words, and the decode-speed stack where the platform has its own
(data/decode_speed.toml). One entry per architecture, found by compute capability or vendor."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from advisor.catalog import GpuSpec

DATA = Path(__file__).resolve().parent / "data" / "architectures.toml"


class ArchSpec(BaseModel):
    id: str
    name: str
    vendor: str
    match: list[str] = Field(default_factory=list)
    fp16_vector_rate: float = 1.0
    # False: no fp16 arithmetic (Kepler, Maxwell): an unnamed 16-bit training runs in fp32
    fp16_training: bool = True
    tensor_cores: bool
    fp8: bool
    flash_attention_2: bool
    bitsandbytes: Literal["all", "nf4", "preview", "none"]
    vllm: bool
    llm_runtime: Literal["transformers", "llamacpp", "vllm"]
    # Whisper when no program is named (parse/platform.py): a framework and its weights
    speech_runtime: str | None = None
    speech_format: str | None = None
    # CTranslate2 (faster-whisper) loads these weight types as another on this card
    ctranslate2_fallback: dict[str, str] = Field(default_factory=dict)
    backend: str
    decode_stack: str | None = None
    peer_link: str | None = None
    sources: list[str]


@cache
def architectures() -> tuple[ArchSpec, ...]:
    with DATA.open("rb") as fh:
        return tuple(ArchSpec(**a) for a in tomllib.load(fh)["arch"])


@cache
def _by_key() -> dict[str, ArchSpec]:
    out: dict[str, ArchSpec] = {}
    for a in architectures():
        for key in a.match:
            out[key] = a
        if not a.match:
            out[f"vendor:{a.vendor}"] = a
    return out


def architecture_of(gpu: GpuSpec | None) -> ArchSpec | None:
    """The card's entry: by compute capability ("6.1", "gfx942 (ROCm)" -> "gfx942"), else
    by vendor (Apple has none); None for a card no entry covers (Ascend)."""
    if gpu is None:
        return None
    table = _by_key()
    cc = (gpu.compute_capability or "").split(" ")[0]
    return table.get(cc) or table.get(f"vendor:{gpu.vendor}")


def backend_of(gpu: GpuSpec | None) -> str:
    """The compute stack's name for the card ("CUDA", "HIP", "Metal"); CUDA when unknown."""
    arch = architecture_of(gpu)
    return arch.backend if arch is not None else "CUDA"


def decode_stack(gpu: GpuSpec) -> str | None:
    """The decode-speed stack (data/decode_speed.toml) this card's platform runs whatever
    runtime is named (Apple: llama.cpp Metal); None: the runtime's own."""
    arch = architecture_of(gpu)
    return arch.decode_stack if arch is not None else None
