"""vLLM's own install docs list Intel XPU (Intel Data Center GPU and Arc) beside CUDA and
ROCm, and its quantization table marks AWQ and GPTQ supported on Intel GPUs (read
2026-12-08; architectures.toml xe-hpg, capabilities.toml vllm_needs_cuda_rocm_or_xpu): the
Arc A770's answer said "⛔ vLLM · AWQ · GPTQ". It keeps bitsandbytes' QLoRA refused, and
vLLM stays refused where it has no official build (Apple silicon)."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.constraints import blockers
from advisor.kinds import answer_kind
from advisor.memory import estimate
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

ASK = {"zh": "我有张 intel arc a770 16g 能跑啥大模型", "en": "what can an intel arc a770 16gb run?"}
BLOCKED = {"zh": "⛔ 这张卡的运行框架做不到：", "en": "⛔ Not on this card's runtimes:"}


def _answer(line: str, lang: str) -> str:
    parsed = parse_query(line)
    result = answer_kind(parsed, "CNY" if lang == "zh" else "USD")
    return render(parsed.question_kind, lang, plain=True, result=result, parsed=parsed)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_arc_capability_answer_no_longer_refuses_vllm(lang: str) -> None:
    text = _answer(ASK[lang], lang)
    line = next(x for x in text.splitlines() if x.startswith(BLOCKED[lang]))
    assert "QLoRA" in line and "bitsandbytes" in line, line
    for runtime in ("vLLM", "AWQ", "GPTQ"):
        assert runtime not in line, line


def _blocked(line: str) -> list[str]:
    p = parse_query(line)
    assert p.workload is not None and p.gpu_id is not None
    return blockers(catalog.gpus()[p.gpu_id], estimate(p.workload))


def test_vllm_with_awq_runs_on_the_arc_but_not_on_apple_silicon() -> None:
    assert _blocked("intel arc a770 16g vllm qwen2.5-7b awq") == []
    assert _blocked("intel arc a770 16g vllm qwen2.5-7b gptq") == []
    assert "vllm_needs_cuda_rocm_or_xpu" in _blocked("m2 max 64gb qwen2.5-7b vllm")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_vllm_on_apple_silicon_says_which_platforms_it_builds_for(lang: str) -> None:
    parsed = parse_query("m2 max 64gb qwen2.5-7b vllm")
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)
    assert ("英特尔显卡" if lang == "zh" else "Intel XPU") in text and "CUDA / ROCm" in text, text
