"""A card's capability list names the quantized-weight kernels its runtimes lack one by one:
vLLM's quantization hardware table marks GPTQ supported on Volta and AWQ only from Turing
(capabilities.toml gptq_needs_volta / awq_needs_turing), so a V100's list rules out AWQ and
never GPTQ; a Radeon (no AWQ / GPTQ kernels in vLLM's ROCm build) rules out both."""

from __future__ import annotations

import tomllib

import pytest

from advisor.catalog import DATA_DIR
from advisor.kinds import answer_kind
from advisor.parse import parse_query
from advisor.render import render

V100 = {"zh": "一张v100 32g 能跑哪些模型啊", "en": "what models can one v100 32gb run"}
RADEON = {"zh": "我的 7900 xtx 能跑什么", "en": "what can my 7900 xtx run"}


def _answer(line: str, lang: str) -> str:
    parsed = parse_query(line)
    result = answer_kind(parsed, "CNY" if lang == "zh" else "USD")
    return render(parsed.question_kind, lang, plain=True, result=result, parsed=parsed)


def _blocked_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("⛔"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_v100_list_rules_out_awq_but_not_gptq(lang: str) -> None:
    line = _blocked_line(_answer(V100[lang], lang))
    assert "AWQ" in line and "GPTQ" not in line, line


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_radeon_list_rules_out_awq_and_gptq(lang: str) -> None:
    line = _blocked_line(_answer(RADEON[lang], lang))
    assert "AWQ" in line and "GPTQ" in line, line


def test_the_kernel_floors_are_vllms_hardware_table_with_its_date() -> None:
    with (DATA_DIR / "capabilities.toml").open("rb") as fh:
        reqs = {r["id"]: r for r in tomllib.load(fh)["requirement"]}
    assert reqs["gptq_needs_volta"]["min_cc"] == 7.0
    assert reqs["awq_needs_turing"]["min_cc"] == 7.5
    for rid in ("gptq_needs_volta", "awq_needs_turing"):
        assert "Supported Hardware" in reqs[rid]["source"] and reqs[rid]["read_date"]


# transformers runs AWQ through AutoAWQ's kernels, built for compute capability 7.5 and up
# (capabilities.toml awq_transformers_needs_turing): a tight bitsandbytes run on a Pascal
# card is never told to switch to AWQ; on a Turing card the same run still is.
PASCAL_TIGHT = {
    "zh": "bnb 4bit 加载 mistral-7b-instruct-v0.3 推理 1080ti 上下文12k 够不够",
    "en": "bnb 4bit mistral-7b-instruct-v0.3 inference on a gtx 1080 ti 12k context",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_pascal_card_is_never_told_to_switch_to_awq(lang: str) -> None:
    from tests.conftest import plain_answer

    pascal = plain_answer(PASCAL_TIGHT[lang], lang)
    assert "1080 Ti" in pascal and "⚠️" in pascal.splitlines()[2]
    assert "awq" not in pascal.lower()
    turing_line = PASCAL_TIGHT[lang].replace("gtx 1080 ti", "2080 ti").replace("1080ti", "2080ti")
    assert "awq-4bit" in plain_answer(turing_line, lang)
