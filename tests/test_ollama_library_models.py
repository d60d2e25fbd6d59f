"""Ollama library tags whose model is not `name-size` in the catalog are read as the model
the library page serves (data/vocab/ollama.toml [tags]), in the quant it downloads
([format_of]): `deepseek-coder-v2:16b` is DeepSeek-Coder-V2-Lite (15.7B MoE, 2.4B active,
MLA), Q4_0, not an unknown model."""

from __future__ import annotations

import pytest

from advisor.catalog import find_model
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        ("ollama 跑 deepseek-coder-v2:16b 7900xtx", "deepseek-coder-v2-lite"),
        ("ollama run deepseek-coder-v2:lite on a 3060", "deepseek-coder-v2-lite"),
        ("deepseek-coder-v2:latest 4090", "deepseek-coder-v2-lite"),
        ("deepseek-coder-v2:236b on 8x h100", "deepseek-coder-v2"),
        ("deepseek-coder-v2-lite-instruct vllm 4090", "deepseek-coder-v2-lite"),
    ],
)
def test_the_tag_is_the_model_the_library_serves(typed: str, model_id: str) -> None:
    p = parse_query(typed)
    assert p.ok, p.error
    assert p.workload.model == model_id


def test_the_library_default_quant_is_q4_0() -> None:
    p = parse_query("ollama deepseek-coder-v2:16b 4090")
    assert p.workload.weights_format == "q4_0"
    assert "ollama_quant = Q4_0" in p.assumed
    named = parse_query("ollama deepseek-coder-v2:16b-lite-instruct-q8_0 4090")
    assert named.workload.weights_format == "q8_0"


def test_the_lite_model_is_a_moe_with_mla() -> None:
    lite = find_model("deepseek-coder-v2-lite")
    assert lite is not None and lite.arch is not None
    assert (lite.params_b, lite.arch.experts, lite.arch.kv_lora_rank) == (15.71, 64, 512)
    assert lite.arch.max_context_tokens == 131072


@pytest.mark.parametrize(
    ("q", "lang", "said"),
    [
        ("ollama 跑 deepseek-coder-v2:16b 7900xtx 能全放显存吗", "zh", "DeepSeek-Coder-V2-Lite"),
        ("ollama deepseek-coder-v2:16b on a 7900 xtx, fits?", "en", "DeepSeek-Coder-V2-Lite"),
    ],
)
def test_the_answer_sizes_the_lite_model_at_q4_0_and_it_fits_24_gb(
    q: str, lang: str, said: str
) -> None:
    text = plain_answer(q, lang)
    assert said in text and "q4_0" in text
    assert "✅" in text.splitlines()[2]
    weights = next(line for line in text.splitlines() if "🟦" in line)
    gib = float(weights.split()[-2])
    assert 7.5 < gib < 9.0  # 15.7B at Q4_0's 4.5 bits a weight: 8.2 GiB
