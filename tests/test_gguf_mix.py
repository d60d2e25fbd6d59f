"""A GGUF K-quant preset is sized from llama.cpp's tensor types (data/gguf_mix.toml, from
llama-quant.cpp): the output matrix at Q6_K, about half the attn_v / ffn_down at Q6_K in
Q4_K_M, and rows not a multiple of 256 at the legacy type that replaces a K-quant, so the
weights come to the published files (Llama-3.1-8B-Instruct Q4_K_M 4.92 GB, Qwen2.5-72B-
Instruct Q4_K_M 47.42 GB), and the answer shows it in both languages."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory.gguf_mix import mixed_weight_bytes
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("model_id", "fmt", "file_gb"),
    [
        ("llama-3.1-8b", "q4_k_m", 4.92),
        ("qwen2.5-7b", "q4_k_m", 4.68),
        ("qwen2.5-14b", "q4_k_m", 8.99),
        ("llama-3.1-70b", "q4_k_m", 42.5),
        ("qwen2.5-72b", "q4_k_m", 47.42),
    ],
)
def test_a_preset_comes_to_its_published_file(model_id: str, fmt: str, file_gb: float) -> None:
    spec = catalog.models()[model_id]
    got = mixed_weight_bytes(fmt, spec.params_b * 1e9, spec.arch)
    assert got is not None and abs(got / 1e9 - file_gb) / file_gb < 0.01, got


def test_a_mixture_of_experts_keeps_the_whole_file_bits() -> None:
    spec = catalog.models()["deepseek-r1"]
    assert mixed_weight_bytes("q4_k_m", spec.params_b * 1e9, spec.arch) is None


Q = {
    "zh": "radeon pro w7900 48g 用ollama跑 qwen2.5-72b q4_k_m 行吗 速度多少",
    "en": "radeon pro w7900 48g with ollama, qwen2.5-72b q4_k_m: does it fit, how fast?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_72b_q4_k_m_answer_carries_the_files_weights(lang: str) -> None:
    text = plain_answer(Q[lang], lang)
    # 47.42 GB less token_embd (0.70 GB at Q4_K), which llama.cpp keeps in host memory
    assert "43.4 GiB" in text, text
    assert "⚠️" in text.split("\n")[2], text
