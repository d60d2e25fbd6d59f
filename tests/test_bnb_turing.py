"""A bitsandbytes 4-bit answer on a card without bf16 (Turing: GTX 1660 Ti) does not only
say "set bfloat16" for bnb_4bit_compute_dtype: it names float16 for cards before Ampere."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

BAICHUAN = {
    "zh": "baichuan2-7b-chat bnb 4bit 量化 推理 1660ti 6g 能跑吗",
    "en": "baichuan2-7b-chat bnb 4bit inference on a 1660 ti 6gb, will it run?",
}
WORD = {"zh": "设为 float16", "en": "float16 on cards before Ampere"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_bnb_compute_dtype_names_float16_for_a_card_without_bf16(lang: str) -> None:
    parsed = parse_query(BAICHUAN[lang])
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, canonical=BAICHUAN[lang], plain=True)
    assert WORD[lang] in text, text[-600:]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_small_card_is_not_told_to_split_over_four_of_it(lang: str) -> None:
    """9.6 GiB on a 5.9 GiB card: four such cards would hold 24 GiB, over twice the job,
    each with its own context; the answer points to a larger card instead."""
    parsed = parse_query(BAICHUAN[lang])
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    head = render("answer", lang, rec=rec, parsed=parsed, canonical=BAICHUAN[lang], plain=True)
    head = "\n".join(head.splitlines()[:4])
    assert "4 张" not in head and "4 cards" not in head, head
    assert ("换显存更大的卡" if lang == "zh" else "a card with more memory") in head, head
