"""llama.cpp's i-quants and Unsloth's dynamic GGUFs ("1.58bit", "UD-IQ1_S", "iq2_xxs") are
read as the formats they are, with llama.cpp's bits per weight (formats.toml), never as
another format; a GGUF type the table lacks ("q4_k_xl") is sized as the K-quant of its digit
and the answer says so, in both languages. A framework that made the file ("unsloth's
GGUF") beside llama.cpp does not turn the question into training."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "fmt", "bits"),
    [
        ("iq1_s", "iq1_s", 1.56),
        ("UD-IQ1_S", "iq1_s", 1.56),
        ("1.58bit", "iq1_s", 1.56),
        ("1.58-bit", "iq1_s", 1.56),
        ("IQ1_M", "iq1_m", 1.88),
        ("IQ2_XXS", "iq2_xxs", 2.18),
        ("iq2_xs", "iq2_xs", 2.31),
        ("iq3_m", "iq3_m", 3.66),
        ("iq4_xs", "iq4_xs", 4.25),
        ("UD-Q2_K_XL", "q2_k_xl", 2.53),
    ],
)
def test_gguf_types_are_read_as_themselves(typed: str, fmt: str, bits: float) -> None:
    parsed = parse_query(f"llama.cpp deepseek-r1 {typed} on 2x a100 80g")
    assert parsed.workload is not None and parsed.workload.weights_format == fmt, parsed
    assert catalog.formats()[fmt].bits == bits


def test_an_unknown_gguf_type_is_named_with_the_type_used() -> None:
    parsed = parse_query("qwen2.5-7b q4_k_xl llama.cpp")
    assert parsed.workload is not None and parsed.workload.weights_format == "q4_k_m"
    assert "gguf_unknown = Q4_K_XL → Q4_K_M" in parsed.assumed


R1 = {
    "zh": "unsloth那个deepseek-r1 1.58bit的gguf 用llama.cpp 两张a100 80g 能全放显存吗 上下文8k",
    "en": "unsloth's deepseek-r1 1.58-bit gguf with llama.cpp on two a100 80g: all in vram? 8k context",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_r1_at_1_58_bit_fits_two_80gb_cards(lang: str) -> None:
    text = plain_answer(R1[lang], lang)
    head = text.split("\n")[0]
    assert "iq1_s" in head and ("推理" in head or "inference" in head), head
    assert "q4_k_m" not in head
    assert "✅" in text, text
    # Unsloth's UD-IQ1_S file is 131 GB: about 61 GiB of weights a card over two
    assert "60.9 GiB" in text, text


@pytest.mark.parametrize(
    ("lang", "words"),
    [("zh", "格式表里没有这种类型"), ("en", "not in my format table")],
)
def test_the_answer_says_which_type_stood_in(lang: str, words: str) -> None:
    text = plain_answer("qwen2.5-7b UD-Q4_K_XL gguf llama.cpp 4090", lang)
    assert "Q4_K_XL" in text and "Q4_K_M" in text and words in text, text
