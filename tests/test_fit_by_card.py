"""/fit reads right for the card it is about: rows in fp16 on a card without bf16, image
pipelines by the low-VRAM recipe people run on the card (the one its answer is for), and
no false precision (tokens in whole thousands, seconds to two significant digits)."""

from __future__ import annotations

import re

import pytest

from advisor import catalog
from advisor.fit import card_fit
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import ktokens, render, sig2


def _fit(gpu: str, lang: str) -> str:
    spec = catalog.gpus()[gpu]
    return render("fit", lang, gpu=spec, fit=card_fit(gpu), count=1, plain=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_card_without_bf16_gets_fp16_rows(lang: str) -> None:
    text = _fit("tesla-t4", lang)
    assert "FP16 3B" in text and "BF16" not in text
    assert "BF16" in _fit("rtx-3090", lang)


@pytest.mark.parametrize(
    ("gpu", "question"), [("rtx-3060-12gb", "sdxl 3060"), ("rtx-2080-ti", "sdxl on 2080 ti")]
)
def test_sdxl_on_an_11_to_12_gb_card_is_listed_by_the_recipe_its_answer_uses(
    gpu: str, question: str
) -> None:
    """Was: "sdxl ✗" on cards people run SDXL on every day. The marks are the answers'
    (✅ fits with 20% free, ⚠️ tight, ❌ does not fit), * for "with the recipe below"."""
    fit = card_fit(gpu)
    rec = recommend_query(parse_query(question))
    assert rec.recipe is not None and fit.diffusion_recipe["sdxl"] == rec.recipe
    text = _fit(gpu, "en")
    assert "sdxl ❌" not in text and "* sdxl as people run it on this card:" in text
    # tight in its answer, tight here; a fit with 20% free there, ✓ here
    mark = "⚠️*" if rec.verdict is not None and rec.verdict.state == "tight" else "✅*"
    assert f"sdxl {mark}" in text


def test_sdxl_in_fp16_names_the_fixed_vae() -> None:
    assert "sdxl-vae-fp16-fix" in _fit("tesla-t4", "en")
    assert "sdxl-vae-fp16-fix" in _fit("tesla-t4", "zh")
    assert "sdxl-vae-fp16-fix" not in _fit("rtx-3090", "en")  # bf16 there


@pytest.mark.parametrize("gpu", ["rtx-3090", "a100-40gb-pcie", "tesla-t4"])
def test_token_counts_are_whole_thousands(gpu: str) -> None:
    """Was: "BF16 74826 tokens"."""
    text = _fit(gpu, "en")
    assert not re.search(r"\b\d{4,} tokens", text), text
    assert re.search(r"\b\d+k tokens", text)
    assert ktokens(74826) == "74k" and ktokens(999) == "999"  # rounded down: it still fits


def test_seconds_show_two_significant_digits() -> None:
    """Was: "prefill ~55.05 s"."""
    assert [sig2(x) for x in (55.05, 1.234, 0.654, 0.05, 123.4)] == [
        "55",
        "1.2",
        "0.65",
        "0.05",
        "123",
    ]
    parsed = parse_query("qwen2.5-72b vllm 32k batch 16")
    text = render("answer", "en", rec=recommend_query(parsed), parsed=parsed, canonical="q")
    assert "prefill" in text and not re.search(r"prefill[^;\n]*~\d+\.\d\d s", text)
