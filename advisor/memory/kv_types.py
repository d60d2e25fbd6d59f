"""Which KV cache types a runtime lets its user set (advisor/data/kv_cache.toml): a type it
lacks ("int8 KV cache" under vLLM) is answered with the smallest type it has that is no
smaller, never an under-estimate, and the answer says how the runtime sets its own."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from advisor import catalog
from advisor.catalog import DATA_DIR

# runtimes that run llama.cpp underneath accept its -ctk/-ctv types (Ollama:
# OLLAMA_KV_CACHE_TYPE q8_0 / q4_0)
_SAME_AS = {"ollama": "llamacpp", "lmstudio": "llamacpp"}


@cache
def kv_cache_table() -> dict[str, Any]:
    with open(DATA_DIR / "kv_cache.toml", "rb") as f:
        return tomllib.load(f)


def runtime_kv_dtype(runtime: str, wanted: str) -> tuple[str, str | None]:
    """(the type the estimate uses, how the runtime sets a quantized cache when the wanted
    type was replaced, else None)."""
    entry = kv_cache_table().get(_SAME_AS.get(runtime, runtime))
    if entry is None or wanted in entry["types"]:
        return wanted, None
    size = catalog.kv_cache_bytes_per_element()
    no_smaller = [t for t in entry["types"] if size[t] >= size[wanted]]
    chosen = min(no_smaller, key=lambda t: size[t]) if no_smaller else wanted
    return chosen, entry["how"]


def transformers_quantized_cache(kv_dtype: str) -> dict[str, Any] | None:
    """transformers' QuantizedCache settings when `kv_dtype` is one of its types (int8 /
    int4 / int2 under HQQ or quanto), else None (data/kv_cache.toml [transformers]
    quantized_*: every layer full length, one layer dequantized and concatenated per step,
    a 16-bit residual of residual_length tokens)."""
    entry = kv_cache_table()["transformers"]
    return entry if kv_dtype in entry["quantized_types"] else None
