"""A MoE model too big for the card under llama.cpp / Ollama gets llama.cpp's expert offload
(--n-cpu-moe N: the experts of N layers in RAM, every layer's attention and shared weights
on the card; data/runtimes.toml [llamacpp_moe_offload]) beside the layer split: first
under llama.cpp, after Ollama's own num_gpu split under Ollama (which has no such option)."""

from __future__ import annotations

import pytest

from advisor.memory import estimate
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from tests.conftest import plain_answer

OLLAMA = {
    "zh": "ollama qwen3:30b-a3b 4070 12g 全放gpu?",
    "en": "ollama qwen3:30b-a3b on a 4070 12gb, can it all go on the gpu?",
}
LLAMACPP = {
    "zh": "llama.cpp 跑 qwen3-30b-a3b q4_k_m，4070 12g 能全放显卡吗",
    "en": "llama.cpp qwen3-30b-a3b q4_k_m on a 4070 12gb",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ollama_keeps_its_own_split_first_and_offers_the_expert_offload(lang: str) -> None:
    rec = recommend_query(parse_query(OLLAMA[lang]))
    assert rec.verdict is not None and (rec.verdict.fix or "").startswith("gpu_layers:")
    text = plain_answer(OLLAMA[lang], lang)
    assert "--n-cpu-moe" in text and "llama-server" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_llamacpp_gets_the_fewest_layers_of_experts_on_the_cpu(lang: str) -> None:
    parsed = parse_query(LLAMACPP[lang])
    rec = recommend_query(parsed)
    assert rec.verdict is not None
    code = rec.verdict.fix or ""
    assert code.startswith("cpu_moe:"), code
    n = int(code.partition(":")[2])
    assert parsed.workload is not None
    w = parsed.workload
    whole = estimate(w).estimate
    moved = estimate(w.model_copy(update={"n_cpu_moe": n})).estimate
    fewer = estimate(w.model_copy(update={"n_cpu_moe": n - 1})).estimate
    assert whole is not None and moved is not None and fewer is not None
    # The card keeps more than the non-expert part yet less than the whole model; one
    # layer's experts fewer on the CPU weighs more.
    assert moved.total_bytes < whole.total_bytes and fewer.total_bytes > moved.total_bytes
    verdict = plain_answer(LLAMACPP[lang], lang).splitlines()[2]
    assert f"--n-cpu-moe {n}" in verdict and "-ngl" in verdict  # its speed beside the split's
    assert ("after it" if lang == "en" else "改后") in verdict  # the figure it comes to
    assert "llama-server" not in verdict  # the Ollama note is for Ollama users


def test_a_dense_model_gets_no_expert_offload() -> None:
    rec = recommend_query(parse_query("llama.cpp qwen2.5-32b q4_k_m on a 4070 12gb"))
    codes = [rec.verdict.fix] if rec.verdict is not None else []
    codes += list(getattr(rec, "fixes", []) or [])
    assert not any(str(c).startswith("cpu_moe") for c in codes)
    assert "--n-cpu-moe" not in plain_answer("llama.cpp qwen2.5-32b q4_k_m on a 4070 12gb", "en")
