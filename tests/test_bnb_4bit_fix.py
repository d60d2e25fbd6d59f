"""A model loaded through bitsandbytes in 8 bits that does not fit: the first change is the
same library's 4-bit (double-quantized NF4 computed in 16 bits, as the transformers
bitsandbytes docs set it up), before another library's checkpoint (AWQ, GPTQ)
(advisor/recommend/fix_candidates.py _bnb_4bit_fix)."""

from __future__ import annotations

import pytest

from checks import answer_invariants as inv
from tests.conftest import answers_both


@pytest.mark.parametrize(
    "q",
    [
        "bitsandbytes 8bit 加载 llama-3.1-8b-instruct 推理 2070 8g 够吗",
        "bitsandbytes 8bit llama-3.1-8b-instruct inference on a 2070 8gb, enough?",
    ],
)
def test_a_bnb_8bit_load_that_does_not_fit_gets_bnb_4bit_first(q: str) -> None:
    """Llama-3.1-8B in LLM.int8 on an 8 GB RTX 2070 (11.2 GiB as asked): was "quantize to
    awq-4bit"; now bitsandbytes' own load_in_4bit NF4 (~7.8 GiB, tight), AWQ after it."""
    rec, texts = answers_both(q)
    v = rec.verdict
    assert v.state == "no_fit"
    assert v.fix == "bnb_4bit:float16"
    assert v.fixed_bytes is not None and v.fixed_bytes < rec.named.usable_bytes
    assert rec.fixes.index("bnb_4bit:float16") < rec.fixes.index("quantize:awq-4bit")
    assert (
        "load_in_4bit=True" in texts["en"] and "bnb_4bit_compute_dtype=torch.float16" in texts["en"]
    )
    assert "「bitsandbytes」" in texts["zh"] and "load_in_4bit=True" in texts["zh"]
    for lang, text in texts.items():
        assert not inv.contradictions(text, lang)


def test_a_16_bit_load_is_not_told_to_switch_to_bitsandbytes() -> None:
    """The rule follows the user's loader: a 16-bit load keeps the usual format ladder."""
    rec, _ = answers_both("llama-3.1-8b-instruct transformers inference on a 2070 8gb, enough?")
    assert not any(c.startswith("bnb_4bit:") for c in rec.fixes)
