"""A serving engine the card cannot run (vLLM / SGLang / TGI on a Pascal card): the answer
sizes the route it recommends instead, llama.cpp with the same model in the GGUF type of
the asked format's bits, and says its verdict; the figure for the engine that cannot run is
labelled as such and its OOM is not said (fix_candidates.llamacpp_route)."""

from __future__ import annotations

from checks import answer_invariants as inv
from tests.conftest import answers_both

P40_VLLM = "vllm gptq qwen2.5-32b，tesla p40，8k 上下文 可以吗"


def test_vllm_on_a_p40_is_answered_for_llama_cpp_q4_k_m() -> None:
    """Was: ⛔ (vLLM needs CC 7.0+) then "⛔ not enough VRAM: 25.9 GiB … OOM", a vLLM
    figure, and the llama.cpp route it recommended never sized. Q4_K_M of Qwen2.5-32B at
    8k is ~21 GiB of the P40's 22.5: runs, tight."""
    rec, texts = answers_both(P40_VLLM)
    v = rec.verdict
    assert v.state == "blocked" and v.fix == "llamacpp:q4_k_m"
    assert v.fixed_bytes is not None and v.fixed_bytes < rec.named.usable_bytes
    assert v.fixed_bytes < rec.named.per_gpu_bytes
    assert {"oom", "oom_as_asked", "vllm_preallocates"}.isdisjoint(p.code for p in rec.pitfalls)
    head = {lang: text.split("\n")[1:3] for lang, text in texts.items()}
    assert "which this card cannot run" in head["en"][0]
    assert "GGUF q4_k_m" in head["en"][1] and "llama.cpp" in head["en"][1]
    assert "这张卡跑不了它" in head["zh"][0] and "「llama.cpp」" in head["zh"][1]
    for lang, text in texts.items():
        assert "OOM" not in text
        assert not inv.contradictions(text, lang)
