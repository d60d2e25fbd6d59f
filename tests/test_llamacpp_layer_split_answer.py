"""llama.cpp over several cards splits by layers (--split-mode layer): no "heads must
divide" stop, no NVLink warning, and its own context (Ollama's 457 MiB per device, no
PyTorch caching-allocator slack) in the figure. QwQ-32B Q4_K_M at 64k with q8_0 KV on two
16 GB cards: 9.2 GiB of weights + 4.2 GiB of KV + 0.5 GiB of buffers a card, ~14.5 GiB:
runs, tight."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

GIB = 2**30
ASKED = {
    "zh": "两张a4000 16g 用llama.cpp跑qwq-32b q4_k_m 上下文64k -ctk q8_0 -ctv q8_0 行不行",
    "en": "two a4000 16gb, llama.cpp qwq-32b q4_k_m 64k context -ctk q8_0 -ctv q8_0, ok?",
}
TIGHT = {"zh": "能跑，但偏紧", "en": "Runs, tight"}


def _answer(lang: str) -> tuple[object, str]:
    parsed = parse_query(ASKED[lang])
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return rec, render("answer", lang, rec=rec, parsed=parsed, plain=True)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_layer_split_that_fits_tight_says_runs_tight_without_a_heads_stop(lang: str) -> None:
    rec, text = _answer(lang)
    assert rec.setup.estimate is not None
    per_card = rec.setup.estimate.total_bytes / GIB
    assert 14.0 < per_card < 15.0, per_card
    headline = text.splitlines()[2]
    assert TIGHT[lang] in headline, headline
    notes = text.split("\n\n")[-2]  # the answer's notes on the setup
    assert "⛔" not in notes, notes
    assert "pipeline-parallel" not in text and "NVLink" not in text


def test_llamacpp_context_is_its_own_not_pytorchs() -> None:
    rec, _ = _answer("en")
    overhead = next(t for t in rec.setup.estimate.terms if t.name == "runtime_overhead")
    assert overhead.bytes == 457 * 2**20  # ollama ml/device.go MinimumMemory, no slack
    assert overhead.formula_key == "runtime_overhead.own"
