"""A bare "量化" / "quantized" is the 4-bit file of the runtime the question implies, said
so: one user running it locally is llama.cpp's GGUF Q4_K_M (what Ollama and LM Studio
download), many users an AWQ checkpoint under vLLM; a format written is kept as written."""

from __future__ import annotations

import pytest

from advisor.__main__ import main
from advisor.kinds import answer_kind
from advisor.kinds.serve import ServeAnswer
from advisor.parse import parse_query
from advisor.recommend import recommend_query


def _text(line: str, lang: str, capsys: pytest.CaptureFixture[str]) -> str:
    main([line, "--lang", lang, "--offline"])
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        ("70b 量化 两张4090 速度多少", "zh", "按 llama.cpp 的 Q4_K_M 算"),
        ("70b quantized on two 4090s, how fast", "en", "sized as llama.cpp's Q4_K_M"),
    ],
)
def test_a_bare_quantized_for_one_user_is_llama_cpp_q4_k_m_and_says_so(
    line: str, lang: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: INT4 under transformers, layers one card at a time, ~12 tok/s on 2x 4090.
    After: Q4_K_M under llama.cpp, ~20 tok/s (19.06 measured, XiongjieDai/GPU-Benchmarks-on-
    LLM-Inference, 70B Q4_K_M on 2x 4090), the same as when Ollama is named."""
    text = _text(line, lang, capsys)
    assert said in text, text
    assert "transformers" not in text.splitlines()[1], text
    rec = recommend_query(parse_query(line), default_currency="CNY")
    ollama = recommend_query(parse_query("70b q4_k_m ollama 两张4090"), default_currency="CNY")
    assert rec.named is not None and ollama.named is not None
    assert rec.named.decode_tokens_per_s == ollama.named.decode_tokens_per_s
    assert abs(rec.named.decode_tokens_per_s / 19.06 - 1) < 0.2


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        ("qwen2.5-7b 量化 vllm 3090", "zh", "按 vLLM 加载的 AWQ 4-bit 仓库算"),
        ("qwen2.5-7b quantized on vllm, 3090", "en", "sized as the 4-bit AWQ repo vLLM loads"),
    ],
)
def test_a_bare_quantized_under_a_serving_engine_is_awq_and_says_so(
    line: str, lang: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert said in _text(line, lang, capsys)


def test_a_bare_quantized_served_to_many_users_is_planned_as_awq() -> None:
    answer = answer_kind(parse_query("qwen2.5-72b 量化 部署给30个人用"), "CNY")
    assert isinstance(answer, ServeAnswer)
    assert answer.weights_format == "awq-4bit"
    # the vendor's AWQ repo is served (catalog quantized_repos), so no "load a quantized
    # repo" note is needed
    assert answer.serve_repo == "Qwen/Qwen2.5-72B-Instruct-AWQ" and not answer.needs_quantized_repo


@pytest.mark.parametrize(
    ("line", "fmt"),
    [
        ("qwen2.5-7b awq 量化 3090", "awq-4bit"),
        ("qwen2.5-7b gptq 量化 3090", "gptq-4bit"),
        ("qwen2.5-7b bnb 4bit 量化 3090", "nf4"),
        ("qwen2.5-7b int8 量化 3090", "int8"),
        ("qwen2.5-7b 量化 transformers 3090", "int4"),
    ],
)
def test_a_format_written_or_another_runtime_keeps_what_was_written(line: str, fmt: str) -> None:
    p = parse_query(line)
    assert p.workload is not None and p.workload.weights_format == fmt, p.assumed
    assert not any(a.startswith("quantized_") for a in p.assumed), p.assumed


def test_training_and_image_models_keep_their_own_reading() -> None:
    """QLoRA's 4-bit is bitsandbytes NF4; a video model's "量化版" stays the generic 4-bit."""
    lora = parse_query("qwen2.5-7b 量化 微调")
    assert lora.workload is not None and lora.workload.weights_format == "nf4"
    video = parse_query("wan2.1 14b 量化版 12g")
    assert video.workload is not None and video.workload.weights_format == "int4"


@pytest.mark.parametrize(
    ("first", "then", "fmt", "runtime"),
    [
        ("70b 两张4090 速度多少", "量化呢", "q4_k_m", "llamacpp"),
        ("qwen2.5-72b 30个人用", "量化呢", "awq-4bit", None),
        ("70b 两张4090 vllm", "quantized?", "awq-4bit", "vllm"),
        ("70b 两张4090 transformers", "量化呢", "int4", "transformers"),
    ],
)
def test_a_follow_up_quantized_reads_as_a_new_question_does(
    first: str, then: str, fmt: str, runtime: str | None
) -> None:
    from advisor.parse.followup import parse_followup

    p = parse_followup(then, parse_query(first))
    assert p is not None and p.workload is not None
    assert p.workload.weights_format == fmt, p.assumed
    got = p.workload.runtime.value if p.workload.runtime else None
    assert got == runtime


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        ("预算5万 跑70b量化", "zh", "（跑 70B，只说了量化：按 llama.cpp 的 Q4_K_M 算）"),
        ("a $8000 workstation to run a quantized 70b", "en", "llama.cpp's Q4_K_M"),
        ("预算5万 qwen2.5-72b 量化 给30个人用", "zh", "只说了量化：按 vLLM 的 AWQ 算"),
    ],
)
def test_a_purchase_plan_says_what_a_bare_quantized_was_sized_as(
    line: str, lang: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert said in _text(line, lang, capsys)


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        ("70b q4: should I buy a 4090 or an a6000", "en", "runtime llama.cpp,"),
        ("跑70b q4 买4090还是a6000", "zh", "运行框架 llama.cpp，"),
    ],
)
def test_a_compare_names_the_runtime_as_people_write_it(
    line: str, lang: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "runtime llamacpp", the engine's id."""
    text = _text(line, lang, capsys)
    assert said in text and "llamacpp" not in text, text
