"""What a quantization library leaves in higher precision when it loads a model
(data/quantizers.toml): transformers' `_keep_in_fp32_modules` (T5's `wo`) stay fp32 under
quantizers that honour the list (bitsandbytes)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from advisor import catalog
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models import Architecture

QUANTIZERS_FILE = Path(__file__).resolve().parent.parent / "data" / "quantizers.toml"


@cache
def _table() -> dict[str, Any]:
    with QUANTIZERS_FILE.open("rb") as fh:
        return tomllib.load(fh)


def quantizer_of(fmt: str) -> str | None:
    """The library a weights format is loaded through, if the table names one."""
    for name, row in _table()["quantizer"].items():
        if fmt in row["formats"]:
            return name
    return None


def keeps_fp32_modules(fmt: str) -> bool:
    """transformers keeps `_keep_in_fp32_modules` in fp32 under quantizers with
    use_keep_in_fp32_modules (bitsandbytes), and for plain float16 loads when the data file
    switches that on (quantizers.toml [float16]: off for now, see there why)."""
    if fmt == "fp16":
        return bool(_table()["float16"]["keep_in_fp32_modules"])
    q = quantizer_of(fmt)
    return bool(q and _table()["quantizer"][q]["keep_in_fp32_modules"])


def fp32_kept_params(params_b: float) -> float:
    """Parameters (in billions) a model of this size keeps in `_keep_in_fp32_modules`."""
    for row in _table()["keep_in_fp32"].values():
        if abs(params_b - row["params_b"]) <= row["params_b"] * row["match_tolerance"]:
            return float(row["fp32_params_b"])
    return 0.0


def fp32_kept_params_arch(family: str | None, arch: Architecture | None) -> float:
    """Weights a catalogued model of this family keeps in fp32 (a T5's `wo`, one
    d_ff x d_model matrix per block), in parameters."""
    row = _table().get("keep_in_fp32_family", {}).get(family or "")
    if row is None or arch is None:
        return 0.0
    return float(arch.layers * arch.intermediate_ * arch.hidden)


def kept_fp32_extra_bytes(family: str | None, arch: Architecture | None, fmt: str) -> float:
    """Bytes the fp32-kept modules add over the format's own size for them."""
    if not keeps_fp32_modules(fmt):
        return 0.0
    kept = fp32_kept_params_arch(family, arch)
    bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
    return kept * (4 - bits / 8)


def component_weight_bytes(params_b: float, fmt: str) -> float:
    """A pipeline component (a text encoder) loaded in `fmt`: its fp32-kept modules at 4
    bytes per weight, the rest in the format."""
    kept = fp32_kept_params(params_b) if keeps_fp32_modules(fmt) else 0.0
    rest = estimate_weight_bytes((params_b - kept) * 1e9, None, fmt)
    return rest + kept * 1e9 * 4
