"""Engine physics checked against what the libraries allocate (helper eng3): modules a
quantizer leaves in higher precision, the loss path by transformers era, the diffusion
working set, vLLM's non-torch memory, encoder-only vision models."""

from __future__ import annotations

from advisor.memory import GIB, estimate
from advisor.models import Workload


def term(result, name: str) -> float:
    return sum(t.bytes for t in result.estimate.terms if t.name == name) / GIB


# --- A. quantizers keep some modules in fp32 -------------------------------------------------


def test_bitsandbytes_keeps_t5_wo_in_fp32():
    """transformers' bnb quantizers honour T5's `_keep_in_fp32_modules = ['wo']`: 1.007B of
    the T5-XXL encoder's 4.76B weights stay fp32 (4 B), the rest NF4 (4.5 bits)."""
    r = estimate(Workload(model="flux.1-dev", weights_format="nf4", text_encoder_format="nf4"))
    t5 = ((4.76 - 1.007) * 4.5 / 8 + 1.007 * 4) * 1e9
    clip = 0.123e9 * 4.5 / 8
    assert abs(term(r, "text_encoders") - (t5 + clip) / GIB) < 0.05


def test_torchao_and_quanto_quantize_t5_wo_like_the_rest():
    """Their transformers quantizers leave use_keep_in_fp32_modules False."""
    for fmt in ("torchao-int8", "quanto-int8"):
        r = estimate(Workload(model="flux.1-dev", weights_format=fmt, text_encoder_format=fmt))
        assert abs(term(r, "text_encoders") - (4.76 + 0.123) * 1e9 / GIB) < 0.05
