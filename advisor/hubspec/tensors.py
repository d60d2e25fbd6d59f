"""Safetensors header metadata (tensor name -> dtype, shape) -> exact parameter counts.

A quantized checkpoint stores packed tensors: GPTQ/AWQ and compressed-tensors pack 32/bits
weights into each int32 of `qweight` / `weight_packed`; bitsandbytes 4-bit and MXFP4 `_blocks`
two weights per uint8. Their scales, zero points and index tensors are bookkeeping, not
parameters. Counting that way gives the model card's figure for a quantized upload too
(the Hub page's own count, which adds packed int32s, does not).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from advisor.hubspec.quant import QuantInfo

# Tensors that describe how others are quantized (AutoGPTQ, AutoAWQ, bitsandbytes, FP8
# block scales, MXFP4, compressed-tensors): not parameters.
_AUX = re.compile(
    r"(\.qzeros|\.scales|\.g_idx|\.absmax|\.quant_map|\.quant_state\.\w+|\.nested_absmax"
    r"|\.nested_quant_map|\.SCB|\.weight_format|_scale_inv|\.weight_scale|\.input_scale"
    r"|\.weight_zero_point|\.weight_g_idx|\.weight_shape|_scales)$"
)
_VISION = re.compile(r"(^|\.)(vision_tower|vision_model|visual|vision_encoder|vit|image_encoder)\.")


class TensorCounts(BaseModel):
    params: int  # parameters as the model card counts them
    vision_params: int = 0  # of which in the vision tower
    stored_by_dtype: dict[str, int]  # elements per dtype as stored (what the Hub page shows)


def elements(shape: Sequence[int]) -> int:
    return math.prod(int(d) for d in shape) if shape else 1


def unpacked(name: str, dtype: str, n: int, quant: QuantInfo | None) -> int:
    """Parameters held by `n` stored elements of one tensor."""
    bits = quant.bits if quant and quant.bits else None
    if dtype == "I32" and bits and (name.endswith(".qweight") or name.endswith(".weight_packed")):
        return n * (32 // bits)
    if dtype == "U8" and (
        name.endswith("_blocks") or (bits == 4 and quant and quant.method == "bitsandbytes")
    ):
        return n * 2
    return n


def count_tensors(
    tensors: Mapping[str, tuple[str, Sequence[int]]], quant: QuantInfo | None = None
) -> TensorCounts:
    stored: dict[str, int] = {}
    params = vision = 0
    for name, (dtype, shape) in tensors.items():
        n = elements(shape)
        stored[dtype] = stored.get(dtype, 0) + n
        if _AUX.search(name):
            continue
        p = unpacked(name, dtype, n, quant)
        params += p
        if _VISION.search(name):
            vision += p
    return TensorCounts(params=params, vision_params=vision, stored_by_dtype=stored)
