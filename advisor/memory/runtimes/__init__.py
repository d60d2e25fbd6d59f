"""How each inference runtime allocates memory: one module per runtime, each mirroring the
runtime's own accounting (vLLM's profile line, llama.cpp's buffers, generate()'s peak).

`pick_runtime` chooses the usual runtime for a question when the user named none; the
choice is always stated in the answer's assumptions.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.terms import Breakdown, weights_line
from advisor.memory.transformer import kv_bytes_per_token, recurrent_state_bytes
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Kind, Mode, Runtime
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

DATA = Path(__file__).resolve().parent.parent.parent / "data" / "runtimes.toml"

# Runtimes that run llama.cpp underneath, and engines that account like vLLM.
LLAMACPP_FAMILY = {Runtime.llamacpp, Runtime.ollama, Runtime.lmstudio}
SERVING_ENGINES = {Runtime.vllm, Runtime.sglang, Runtime.tgi}
# Free-text `framework` words that name a runtime (older callers put it there).
_FRAMEWORK_RUNTIMES = {
    "vllm": Runtime.vllm,
    "sglang": Runtime.sglang,
    "tgi": Runtime.tgi,
    "llama.cpp": Runtime.llamacpp,
    "llamacpp": Runtime.llamacpp,
    "ollama": Runtime.ollama,
    "lm studio": Runtime.lmstudio,
    "lmstudio": Runtime.lmstudio,
    "exllamav2": Runtime.exllamav2,
    "exllama": Runtime.exllamav2,
    "lmdeploy": Runtime.lmdeploy,
    "turbomind": Runtime.lmdeploy,
    "mlx": Runtime.mlx,
    # AutoAWQ runs the model in PyTorch under transformers (its fused modules: autoawq.py).
    "autoawq": Runtime.transformers,
    # rasbt/LLMs-from-scratch's own PyTorch models: eager PyTorch as under transformers, with
    # what its code materialises (runtimes/from_scratch.py).
    "llms-from-scratch": Runtime.transformers,
}
# Formats people serve with vLLM rather than run under generate().
SERVING_FORMATS = {"awq-4bit", "gptq-4bit", "gptq-8bit", "fp8", "mxfp4"}
# A KV cache type only one kind of runtime offers (data/kv_cache.toml), when none is named:
# an fp8 cache is vLLM's --kv-cache-dtype, a q8_0 / q4_0 cache llama.cpp's -ctk/-ctv (an
# int8 / int4 / int2 cache is transformers' quantized cache, the default anyway).
_KV_RUNTIMES = {
    "fp8": Runtime.vllm,
    **{t: Runtime.llamacpp for t in ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl")},
}


@cache
def runtime_data() -> dict[str, Any]:
    with DATA.open("rb") as fh:
        return tomllib.load(fh)


def coefficient(runtime: str, key: str) -> Any:
    return runtime_data()[runtime][key]


def is_gguf(fmt: str) -> bool:
    spec = catalog.find_format(fmt)
    return spec is not None and spec.scope == "all" and fmt.startswith("q")


def pick_runtime(w: Workload, kind: Kind, fmt: str | None) -> tuple[Runtime, bool]:
    """The runtime the memory follows, and whether it was assumed (not given)."""
    if w.runtime is not None:
        return w.runtime, False
    framework = (w.framework or "").lower()
    for word, runtime in _FRAMEWORK_RUNTIMES.items():
        if word in framework:
            return runtime, False
    if kind == Kind.diffusion:
        return Runtime.diffusers, True
    if w.mode.is_training or w.mode == Mode.load_only:
        return Runtime.transformers, True
    if fmt is not None and is_gguf(fmt):
        return Runtime.llamacpp, True
    if (w.concurrency or 1) > 1 or (fmt in SERVING_FORMATS):
        return Runtime.vllm, True
    return _KV_RUNTIMES.get(w.kv_cache_dtype or "", Runtime.transformers), True


@dataclass
class InferenceSetup:
    """What every runtime's inference model starts from."""

    w: Workload
    model: ResolvedModel
    spec: ModelSpec | None
    arch: Architecture
    runtime: Runtime
    fmt: str
    weight_bytes: int
    weight_formula: str
    split: int  # cards the weights are split over
    tp: int  # tensor-parallel degree (KV heads and MLP columns split)
    batch: int  # sequences at once
    prompt: int
    context: int
    kv_dtype: str
    attention: Attention
    framework: str | None
    weight_bits: float
    # transformers' torch_dtype: the unquantized modules, hidden states and cache are in it
    # (data/quantizers.toml [load_dtype]); fp32 doubles them
    load_dtype: str = "bf16"
    # prompt positions per sequence that are an encoder's input (Whisper's audio frames):
    # the decoder computes no logits over them
    encoder_tokens: int = 0

    @property
    def kept_bytes(self) -> float:
        """Bytes per weight of the modules a quantized format leaves in the load dtype."""
        return 4.0 if self.load_dtype == "fp32" else 2.0

    @property
    def act_bytes(self) -> float:
        """Bytes per element of the runtime's hidden states: the load dtype's."""
        return 4.0 if self.load_dtype == "fp32" else 2.0

    @property
    def kv_per_token(self) -> float:
        """KV bytes per token per card for this setup's context."""
        per = kv_bytes_per_token(self.arch, self.kv_dtype, self.context, self.runtime.value)
        return per / self.tp


def add_weights(s: InferenceSetup, acc: Breakdown, weight_bytes: float | None = None) -> int:
    """Weights on each card: the checkpoint's bytes split over the cards."""
    b = s.weight_bytes if weight_bytes is None else weight_bytes
    key, values = (
        weights_line(s.model.params_b * 1e9, b, s.weight_bits, s.fmt, s.split, s.kept_bytes)
        if not acc.lean  # a lean breakdown keeps no text
        else ("weights", {})
    )
    return acc.add(
        "weights",
        b / s.split,
        s.weight_formula + (f" / {s.split} cards" if s.split > 1 else ""),
        key=key,
        **values,
    )


def add_kv(
    s: InferenceSetup,
    acc: Breakdown,
    per_tok: float,
    tokens: int,
    sequences: int,
    cards: int | None = None,
) -> int:
    """KV cache: per-token bytes (already divided over the cards: by heads under TP, by
    layers under a layer split) x tokens x sequences."""
    arch = s.arch
    cards = s.tp if cards is None else cards
    b = per_tok * tokens * sequences
    state = add_recurrent_state(s, acc, sequences, cards)
    if acc.lean:  # a lean breakdown keeps no text (terms.Breakdown)
        return acc.add("kv_cache", b, "") + state
    return (
        acc.add(
            "kv_cache",
            b,
            f"{per_tok / 1024:.0f} KiB/token ({arch.kv_layers_} attention layers x "
            f"{arch.kv_heads_} KV heads x {arch.head_dim_} x 2 x {s.kv_dtype}) x {tokens} tokens"
            f" x {sequences} sequences" + (f" / {cards} cards" if cards > 1 else ""),
            key="kv_cache",
            kib_per_token=round(per_tok / 1024, 1),
            layers=arch.kv_layers_,
            kv_heads=arch.kv_heads_,
            head_dim=arch.head_dim_,
            kv_dtype=s.kv_dtype,
            tokens=tokens,
            sequences=sequences,
            cards=cards,
        )
        + state
    )


def add_recurrent_state(s: InferenceSetup, acc: Breakdown, sequences: int, cards: int) -> int:
    """A hybrid model's mamba / linear-attention / convolution layers: a fixed state per
    sequence (advisor.memory.transformer.recurrent_state_bytes), not a KV cache."""
    arch = s.arch
    if not arch.recurrent_state_elements:
        return 0
    per_seq = recurrent_state_bytes(arch, s.kv_dtype) / cards
    layers = arch.state_layers
    if acc.lean:
        return acc.add("recurrent_state", per_seq * sequences, "")
    return acc.add(
        "recurrent_state",
        per_seq * sequences,
        f"{per_seq / 2**20:.1f} MiB/sequence ({layers} state layers) x {sequences} sequences",
        key="recurrent_state",
        mib_per_sequence=round(per_seq / 2**20, 1),
        layers=layers,
        sequences=sequences,
    )
