"""llama.cpp keeps tok_embd in host memory, but a model whose output shares it (tied:
Gemma 3, Qwen2.5 <= 3B, Llama 3.2) still gets an output matrix on the card: the loader
creates it from tok_embd with TENSOR_DUPLICATED, "duplicated to allow offloading"
(llama.cpp src/llama-model.cpp). Gemma-3-12B Q4_K_M holds about its 7.3 GB file (6.8 GiB)
on the card, not 6.3 GiB; at 32k on an 8 GB laptop card, a context cut that still does
not fit is no longer offered ahead of partial offload."""

from __future__ import annotations

import pytest

from advisor.memory import estimate
from advisor.memory.runtimes import coefficient
from advisor.models.workload import Workload
from tests.conftest import plain_answer

GIB = 2**30
GEMMA = {
    "en": "llama.cpp gemma-3-12b-it q4_k_m with 32k context on an 8gb 4060 laptop, -ctk q8_0 -ctv q8_0, fits?",
    "zh": "llama.cpp 跑 gemma-3-12b-it q4_k_m 32k 上下文 4060 笔记本 8g，-ctk q8_0 -ctv q8_0，放得下吗",
}


def _weights(**fields: object) -> float:
    est = estimate(Workload(runtime="llamacpp", **fields)).estimate
    assert est is not None
    return next(t.bytes for t in est.terms if t.name == "weights") / GIB


def test_the_duplicated_output_is_llama_cpps_own_rule_with_its_source() -> None:
    assert coefficient("llamacpp", "tied_output_duplicated") is True
    source = coefficient("llamacpp", "tied_output_source")
    assert "TENSOR_DUPLICATED" in source and "2026-12-07" in source


def test_a_tied_gemma_3_12b_holds_about_its_q4_k_m_file_on_the_card() -> None:
    # bartowski/google_gemma-3-12b-it-GGUF Q4_K_M: 7.30 GB = 6.80 GiB, tok_embd included
    got = _weights(model="gemma-3-12b", weights_format="q4_k_m")
    assert 6.6 <= got <= 7.1, got


def test_a_partial_offload_leaves_the_duplicated_output_on_the_host() -> None:
    full = _weights(model="gemma-3-12b", weights_format="q4_k_m")
    part = _weights(model="gemma-3-12b", weights_format="q4_k_m", n_gpu_layers=24)
    assert part < full / 2 + 0.1


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_first_fix_at_32k_is_partial_offload_not_a_cut_that_overflows(lang: str) -> None:
    head = "\n".join(plain_answer(GEMMA[lang], lang).splitlines()[:4])
    assert "-ngl" in head, head
    assert "8192" not in head.splitlines()[2], head
