"""The KV-cache change an answer offers is one the named runtime has (llama.cpp: q8_0 via
--cache-type-k/-v, vLLM: fp8, faster-whisper: none), a context the user asked is kept with
it before being cut, and "batch_size 8" is read as batch 8."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def _answer(line: str, lang: str) -> tuple[object, object, str]:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return parsed, rec, render("answer", lang, rec=rec, parsed=parsed, plain=True)


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("faster-whisper large-v3 fp16 batch_size 8 批量转录 3060 12g 够吗", "zh"),
        ("faster-whisper large-v3 fp16 batch_size=8 on a 3060 12gb, enough?", "en"),
    ],
)
def test_batch_size_with_an_underscore_is_read(line: str, lang: str) -> None:
    parsed, rec, text = _answer(line, lang)
    assert parsed.workload is not None and parsed.workload.batch_size == 8, parsed.ignored
    assert not parsed.ignored, parsed.ignored
    assert "fp8" not in text, text  # CTranslate2 has no fp8 KV cache


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_faster_whisper_kv_note_offers_no_kv_format(lang: str) -> None:
    _, rec, text = _answer("faster-whisper large-v3 fp16 batch 16 on a 3060 12gb", lang)
    # Whisper's decoder context is fixed: its note names the batch only
    assert "batch_kv_fixed_context" in {p.code for p in rec.pitfalls}
    assert "fp8" not in text and "q8_0" not in text, text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_llamacpp_at_the_asked_128k_is_told_q8_kv_before_a_shorter_context(lang: str) -> None:
    """Llama-3.1-8B Q4_K_M at 128k on a 16 GB card: fp16 KV 16.0 GiB does not fit; a q8_0
    KV cache (8.5 GiB) does, tight, at the 128k asked: that comes before cutting to 32k."""
    line = "llama.cpp llama-3.1-8b q4_k_m with 128k context on a 16gb 4060 ti, does it fit?"
    _, rec, text = _answer(line, lang)
    assert rec.verdict is not None and rec.verdict.fix == "kv_q8_llamacpp", rec.verdict
    assert rec.verdict.fix_tight, rec.verdict
    verdict_line = text.splitlines()[2]
    assert "q8_0" in verdict_line and "32768" not in verdict_line, verdict_line
    assert "fp8" not in text, text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_llamacpp_user_already_on_q8_kv_is_not_told_fp8(lang: str) -> None:
    line = "两张a4000 16g 用llama.cpp跑qwq-32b q4_k_m 上下文64k -ctk q8_0 -ctv q8_0 行不行"
    _, rec, text = _answer(line, lang)
    assert "long_context_kv_cards" in {p.code for p in rec.pitfalls}  # two cards
    assert "fp8" not in text, text


def test_vllm_keeps_its_fp8_kv_cache() -> None:
    _, rec, text = _answer("vllm llama-3.1-8b 128k context on a 4090", "en")
    assert "--kv-cache-dtype fp8" in text, text
