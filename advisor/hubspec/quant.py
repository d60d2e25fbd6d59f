"""A config.json's `quantization_config` -> the engine's weight format and its real bits per
weight (scales and zero points included).

GPTQ and AWQ store per group of `group_size` weights one fp16 scale and one `bits`-wide zero
point (AutoGPTQ / AutoAWQ checkpoint layout), so a weight costs bits + 16/g + bits/g:
4-bit, g=128 -> 4.156 bits, the catalog's own figure for gptq-4bit. bitsandbytes NF4 keeps
one fp32 absmax per 64 weights (4.5 bits), 8-bit per-row scales (~8 bits); FP8 checkpoints
one scale per 128x128 block (8.0); MXFP4 one 8-bit scale per 32 weights (4.25).
Sources: AutoGPTQ/AutoAWQ pack formats, bitsandbytes docs (4-bit blocksize 64), the OCP
MX v1.0 spec, compressed-tensors' QuantizationArgs; read 2026-11-30.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor import catalog


class QuantInfo(BaseModel):
    method: str  # gptq | awq | bitsandbytes | fp8 | mxfp4 | compressed-tensors | ...
    format_id: str | None  # the engine's format (advisor/data/formats.toml), if it has one
    bits: int | None = None  # stored bits of a quantized weight
    group_size: int | None = None
    bits_per_weight: float | None = None  # real cost, scales included


def _gptq_like(method: str, bits: int, group: int | None) -> QuantInfo:
    g = group if group and group > 0 else None
    real = bits + (16 + bits) / g if g else bits + 16 / 4096  # per-channel: negligible
    fmt = {"gptq": {3: "gptq-3bit", 4: "gptq-4bit", 8: "gptq-8bit"}, "awq": {4: "awq-4bit"}}
    return QuantInfo(
        method=method,
        format_id=fmt.get(method, {}).get(bits) or ("int4" if bits == 4 else None),
        bits=bits,
        group_size=g,
        bits_per_weight=round(real, 3),
    )


def _bitsandbytes(q: dict[str, Any]) -> QuantInfo:
    if q.get("load_in_8bit") or q.get("_load_in_8bit"):
        return QuantInfo(method="bitsandbytes", format_id="int8", bits=8, bits_per_weight=8.0)
    kind = str(q.get("bnb_4bit_quant_type") or "fp4").lower()
    double = bool(q.get("bnb_4bit_use_double_quant"))
    fmt = "nf4-dq" if kind == "nf4" and double else ("nf4" if kind == "nf4" else "fp4")
    spec = catalog.formats()[fmt]
    return QuantInfo(
        method="bitsandbytes", format_id=fmt, bits=4, group_size=64, bits_per_weight=spec.bits
    )


def _compressed_tensors(q: dict[str, Any]) -> QuantInfo:
    groups = q.get("config_groups") or {}
    weights = next((g.get("weights") for g in groups.values() if g.get("weights")), None) or {}
    bits = int(weights.get("num_bits") or 8)
    kind = str(weights.get("type") or "int")
    group = weights.get("group_size")
    if kind == "float" and bits == 8:
        fmt = "fp8-w8a8" if any(g.get("input_activations") for g in groups.values()) else "fp8"
        return QuantInfo(method="compressed-tensors", format_id=fmt, bits=8, bits_per_weight=8.0)
    info = _gptq_like("compressed-tensors", bits, int(group) if group else None)
    return info.model_copy(update={"format_id": {4: "int4", 8: "int8"}.get(bits)})


def quant_info(config: dict[str, Any]) -> QuantInfo | None:
    """None for an unquantized checkpoint."""
    q = config.get("quantization_config")
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method") or "").lower()
    if method in ("gptq", "awq"):
        return _gptq_like(method, int(q.get("bits") or q.get("w_bit") or 4), q.get("group_size"))
    if method == "bitsandbytes" or "load_in_4bit" in q or "load_in_8bit" in q:
        return _bitsandbytes(q)
    if method == "fp8":
        return QuantInfo(method="fp8", format_id="fp8", bits=8, bits_per_weight=8.0)
    if method == "mxfp4":
        return QuantInfo(
            method="mxfp4", format_id="mxfp4", bits=4, group_size=32, bits_per_weight=4.25
        )
    if method == "compressed-tensors":
        return _compressed_tensors(q)
    return QuantInfo(method=method or "unknown", format_id=None)
