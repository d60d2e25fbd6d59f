"""KV cache precision as users set it (issue 34 item 3): read from the question, per-runtime
validity from advisor/data/kv_cache.toml, shown in the breakdown."""

from __future__ import annotations

import pytest

from advisor import estimate
from advisor.parse import parse_query


def kv_term(text: str) -> tuple[int, str, list[str]]:
    parsed = parse_query(text)
    assert parsed.ok and parsed.workload is not None, parsed.error
    result = estimate(parsed.workload)
    term = next(t for t in result.estimate.terms if t.name == "kv_cache")
    return term.bytes, term.formula, [str(a) for a in result.assumptions]


@pytest.mark.parametrize(
    ("text", "kv"),
    [
        ("llama-3.1-8b vllm --kv-cache-dtype fp8 32k context", "fp8"),
        ("llama-3.1-8b vllm --kv-cache-dtype fp8_e5m2 32k context", "fp8"),
        ("qwen2.5-7b torchao int8 kv cache 128k context", "int8"),
        ("qwen2.5-7b kv cache 4bit 32k", "int4"),
        ("qwen2.5-7b KV缓存 int8 4090", "int8"),
        ('qwen2.5-7b transformers cache_implementation="quantized" 32k', "int4"),
        ("llama-3.1-8b llama.cpp -ctk q8_0 -ctv q8_0 -fa 32k ctx", "q8_0"),
        ("llama-3.1-8b llama.cpp -ctk q8_0 -ctv q4_0 -fa 32k ctx", "q8_0"),
    ],
)
def test_kv_cache_type_is_read_from_the_question(text: str, kv: str) -> None:
    parsed = parse_query(text)
    assert parsed.ok and parsed.workload is not None
    assert parsed.workload.kv_cache_dtype == kv
    assert parsed.workload.weights_format != "int8" or "int8 kv" not in text


def test_int8_kv_cache_under_transformers_is_answered_not_refused() -> None:
    """torchao/HQQ int8: 28 layers x 2 x 4 KV heads x 128 x 1.0625 B = 30.5 KiB/token, half
    of bf16's 56 KiB."""
    b, formula, _ = kv_term("qwen2.5-7b torchao int8 kv cache 128k context")
    bf16, _, _ = kv_term("qwen2.5-7b 128k context")
    assert "int8" in formula
    assert b == pytest.approx(bf16 * 1.0625 / 2, rel=0.01)


def test_vllm_has_no_int8_cache_so_the_answer_says_so_and_stays_at_16_bit() -> None:
    b, formula, assumed = kv_term("llama-3.1-8b vllm kv cache int8 32k context")
    fp8, fp8_formula, _ = kv_term("llama-3.1-8b vllm --kv-cache-dtype fp8 32k context")
    assert "fp16" in formula and "fp8" in fp8_formula
    assert b == pytest.approx(2 * fp8, rel=0.01)
    assert any(a.startswith("kv_cache_dtype_unsupported = int8 → fp16") for a in assumed)


def test_llamacpp_q4_0_cache_is_a_quarter_plus_scales() -> None:
    q4, formula, _ = kv_term("llama-3.1-8b llama.cpp -ctk q4_0 -ctv q4_0 -fa 32k ctx")
    f16, _, _ = kv_term("llama-3.1-8b llama.cpp 32k ctx")
    assert "q4_0" in formula
    assert q4 == pytest.approx(f16 * 0.5625 / 2, rel=0.01)
