"""A fine-tune published under a name of its own that keeps its base's architecture
(data/finetunes.toml, each row with the model card that says what it was fine-tuned from) is
sized as that base and the answer says so, in both languages, instead of declining the
model."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "base"),
    [
        ("llama-3.1-nemotron-70b-instruct", "llama-3.1-70b"),
        ("llama-3.1-nemotron-70b", "llama-3.1-70b"),
        ("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "llama-3.1-70b"),
        ("hermes-3-llama-3.1-8b", "llama-3.1-8b"),
        ("athene-v2-chat", "qwen2.5-72b"),
        ("openthinker-7b", "qwen2.5-7b"),
    ],
)
def test_a_finetune_is_sized_as_its_base(typed: str, base: str) -> None:
    parsed = parse_query(f"vllm {typed} on 4x a100 80g")
    assert parsed.workload is not None and parsed.workload.model == base, parsed
    assert any(a.startswith("finetune_of = ") for a in parsed.assumed), parsed.assumed


def test_every_row_names_a_catalog_base_and_its_source() -> None:
    for row in catalog._load("finetunes.toml")["finetune"]:
        assert row["base"] in catalog.models(), row
        assert "read 2026-12-07" in row["source"] and "huggingface.co/" in row["source"], row


NEMOTRON = {
    "zh": "llama.cpp 跑 llama-3.1-nemotron-70b-instruct q4_k_m 两张3090 上下文32k 开-ctk q8_0 -ctv q8_0 能全放gpu吗",
    "en": "llama.cpp llama-3.1-nemotron-70b-instruct q4_k_m on two 3090s, 32k context, -ctk q8_0 -ctv q8_0: all on the gpus?",
}
WORDS = {"zh": "按模型卡，它是在该模型上微调的", "en": "a fine-tune of that model"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_answer_sizes_the_base_and_says_so(lang: str) -> None:
    text = plain_answer(NEMOTRON[lang], lang)
    assert text.startswith("Llama 3.1 70B"), text
    assert "nemotron" in text.lower() and WORDS[lang] in text, text
    assert "23.4 GiB" in text, text  # as Llama 3.1 70B Q4_K_M (42.5 GB file) + q8_0 KV at 32k
