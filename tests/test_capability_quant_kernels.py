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
