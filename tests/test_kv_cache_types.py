"""KV cache precision as users set it: read from the question, per-runtime
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


# Each phrasing as users write it (issue threads, READMEs, chats), en and zh: the type read,
# and the runtime its switch belongs to where none is named (None: the default applies).
@pytest.mark.parametrize(
    ("text", "kv", "runtime"),
    [
        ("llama-3.1-8b int8 kv cache torchao 32k on a 4090", "int8", "transformers"),
        ('llama-3.1-8b cache_implementation="quantized" 32k', "int4", "transformers"),
        (
            'llama-3.1-8b cache_implementation="quantized" '
            'cache_config={"backend": "HQQ", "nbits": 2} 32k',
            "int2",
            "transformers",
        ),
        ("llama-3.1-8b cache_implementation='quantized' nbits=2", "int2", "transformers"),
        ("llama-3.1-8b transformers quantized cache quanto int4 32k", "int4", "transformers"),
        ("llama-3.1-8b HQQ int2 kv cache 32k", "int2", "transformers"),
        ("llama-3.1-8b -ctk q8_0 -ctv q8_0 32k", "q8_0", "llamacpp"),
        ("llama-3.1-8b llama-server --cache-type-k q4_0 32k", "q4_0", "llamacpp"),
        ("qwen2.5-7b OLLAMA_KV_CACHE_TYPE=q8_0 32k", "q8_0", "ollama"),
        ("qwen2.5-7b ollama k/v cache q8_0", "q8_0", "ollama"),
        ("llama-3.1-8b vllm --kv-cache-dtype fp8 32k", "fp8", "vllm"),
        ("llama-3.1-8b kv cache int8 32k", "int8", None),
        ("llama-3.1-8b kv cache quantized to int8", "int8", None),
        ("llama-3.1-8b KV 量化 fp8 32k 4090", "fp8", None),
        ("llama-3.1-8b KV量化int8", "int8", None),
        ("llama-3.1-8b KV缓存量化 fp8", "fp8", None),
        ("qwen2.5-7b 量化KV缓存 int4", "int4", None),
        ("qwen2.5-7b KV cache 用 int8", "int8", None),
        ("qwen2.5-7b KV 量化", "int4", None),
    ],
)
def test_each_phrasing_reads_the_cache_type_not_the_weights(
    text: str, kv: str, runtime: str | None
) -> None:
    """ "KV 量化 fp8" was fp8 weights with a bf16 cache; "quantized cache quanto int4" and
    "量化KV缓存 int4" quantized the weights too; "torchao" was an ignored word."""
    parsed = parse_query(text)
    assert parsed.ok and parsed.workload is not None, parsed.error
    w = parsed.workload
    assert w.kv_cache_dtype == kv
    assert w.weights_format in (None, "q4_k_m")  # a GGUF runtime's default download only
    assert (w.runtime.value if w.runtime else None) == runtime
    assert not [f for f in parsed.ignored if f.strip(" -_,")], parsed.ignored


def answer(text: str, lang: str) -> tuple[str, list[str]]:
    from advisor.recommend import recommend_query
    from advisor.render import render
    from standin import visible_text

    parsed = parse_query(text)
    rec = recommend_query(parsed)
    shown = visible_text(render("answer", lang, rec=rec, parsed=parsed, canonical="x"), "HTML")
    notes = [p.code for p in rec.pitfalls]
    return shown, notes


@pytest.mark.parametrize(
    ("text", "en", "zh"),
    [
        ("llama-3.1-8b int8 kv cache torchao 32k on a 4090", "KV cache int8", "KV 缓存 int8"),
        ("llama-3.1-8b KV 量化 fp8 32k 4090", "KV cache fp8", "KV 缓存 fp8"),
        ("llama-3.1-8b -ctk q4_0 -ctv q4_0 32k on a 3090", "KV cache q4_0", "KV 缓存 q4_0"),
        # vLLM has no int8 cache: said as the 16-bit one it was answered with
        ("llama-3.1-8b vllm kv cache int8 32k on a 4090", "KV cache fp16", "KV 缓存 fp16"),
    ],
)
def test_the_header_says_the_kv_cache_type_in_both_languages(text: str, en: str, zh: str) -> None:
    """The header said only 'bf16' beside a KV term computed at int8."""
    for lang, said in (("en", en), ("zh", zh)):
        shown, _ = answer(text, lang)
        assert said in shown.splitlines()[0], (lang, shown.splitlines()[0])


def test_an_unset_cache_type_is_not_in_the_header() -> None:
    shown, _ = answer("llama-3.1-8b 32k on a 4090", "en")
    assert "KV cache" not in shown.splitlines()[0]


def test_vllm_fp8_kv_cache_on_an_ampere_card_says_it_cannot_and_offers_16_bit() -> None:
    """vLLM stores fp8 as E4M3, which needs CC 8.9+ (vLLM #26431: 'type fp8e4nv not
    supported in this architecture' on an RTX 3090); the same run with the flag dropped."""
    shown, notes = answer("qwen2.5-3b vllm --kv-cache-dtype fp8 8k on a 3090", "en")
    assert "vllm_fp8_kv_needs_ada" in notes
    assert "Cannot run as asked" in shown and "fp8e4nv" in shown
    assert "Fits with a 16-bit KV cache (drop --kv-cache-dtype fp8)" in shown
    zh, _ = answer("qwen2.5-3b vllm --kv-cache-dtype fp8 8k on a 3090", "zh")
    assert "去掉 --kv-cache-dtype fp8" in zh
    _, on_ada = answer("qwen2.5-3b vllm --kv-cache-dtype fp8 8k on a 4090", "en")
    assert "vllm_fp8_kv_needs_ada" not in on_ada


def test_llamacpp_quantized_cache_says_what_flash_attention_it_needs() -> None:
    _, notes = answer("llama-3.1-8b llama.cpp -ctk q8_0 -ctv q8_0 32k on a 3090", "en")
    assert "llamacpp_kv_needs_flash_attention" in notes
    shown, notes = answer("llama-3.1-8b llama.cpp -ctk q4_0 -ctv q4_0 -fa off 32k on a 3090", "en")
    assert "llamacpp_kv_flash_attention_off" in notes
    assert "requires Flash Attention" in shown
    shown, notes = answer("qwen2.5-7b ollama OLLAMA_KV_CACHE_TYPE=q8_0 32k on a 3090", "zh")
    assert "ollama_kv_needs_flash_attention" in notes and "OLLAMA_FLASH_ATTENTION=1" in shown


def test_fa_off_is_read_as_no_flash_attention_and_costs_the_score_matrix() -> None:
    on = parse_query("llama-3.1-8b llama.cpp -ctk q8_0 -ctv q8_0 -fa on 32k")
    off = parse_query("llama-3.1-8b llama.cpp -ctk q8_0 -ctv q8_0 -fa off 32k")
    assert on.workload is not None and off.workload is not None
    assert on.workload.attention == "flash" and off.workload.attention == "eager"
    assert estimate(off.workload).estimate.total_bytes > estimate(on.workload).estimate.total_bytes


@pytest.mark.parametrize(
    ("text", "kv", "said"),
    [
        ("qwen2.5-7b ollama kv cache quantization 32k on a 3090", "q8_0", "q8_0, the type"),
        ("qwen2.5-7b vllm KV 量化 32k on a 4090", "fp8", "fp8, the type"),
        ('qwen2.5-7b cache_implementation="quantized" 32k on a 3090', "int4", "of 4 bits"),
    ],
)
def test_a_quantized_cache_with_no_type_takes_the_runtimes_usual_one_and_says_so(
    text: str, kv: str, said: str
) -> None:
    """ "KV 量化" under Ollama was transformers' nbits-4 default (q4_0, half of the q8_0 its
    FAQ gives), and the assumption read "Assumed: 4"."""
    parsed = parse_query(text)
    assert parsed.workload is not None and parsed.workload.kv_cache_dtype == kv
    en, _ = answer(text, "en")
    assumed = next(line for line in en.splitlines() if line.startswith("Assumed:"))
    assert said in assumed and "Assumed: 4;" not in assumed
    zh, _ = answer(text, "zh")
    assert f"KV 缓存 {kv}" in zh.splitlines()[0]


def test_ollama_with_flash_attention_off_keeps_a_16_bit_cache() -> None:
    """OLLAMA_FLASH_ATTENTION=0: Ollama ignores OLLAMA_KV_CACHE_TYPE (ollama PR #9591), so
    the q4_0 cache asked is answered at f16 (was 0.5625 B per value: an under-estimate), and
    the header and the assumptions say so; =1 keeps q8_0 and reads every word."""
    on = parse_query("qwen2.5-7b OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 32k")
    assert on.workload is not None and on.workload.attention == "flash" and not on.ignored
    text = "qwen2.5-7b ollama OLLAMA_FLASH_ATTENTION=0 OLLAMA_KV_CACHE_TYPE=q4_0 32k on a 3090"
    b, formula, assumed = kv_term(text)
    f16, _, _ = kv_term("qwen2.5-7b ollama 32k on a 3090")
    assert b == pytest.approx(f16, rel=0.01) and "q4_0" not in formula
    assert any(a.startswith("kv_cache_without_flash_attention = q4_0 → fp16") for a in assumed)
    en, _ = answer(text, "en")
    assert "KV cache fp16" in en.splitlines()[0] and "ignores OLLAMA_KV_CACHE_TYPE" in en
    zh, _ = answer(text, "zh")
    assert "KV 缓存 fp16" in zh.splitlines()[0] and "OLLAMA_FLASH_ATTENTION=1" in zh
