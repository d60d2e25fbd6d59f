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


MAC_VLLM = "m2 max 64gb qwen2.5-7b vllm"


def test_vllm_on_a_mac_is_answered_for_llama_cpp_with_the_reason_kept() -> None:
    """Was: ⛔ (vLLM has no Apple build) and rented cards only. A runtime kept off the
    owner's hardware by its platform (capabilities.toml `engine = true`) gets the same
    sized llama.cpp route as vLLM on a Pascal card: Qwen2.5-7B as a GGUF fp16 file, ~14 GiB
    of the M2 Max's 48 GiB; the ⛔ line stays as the reason and nothing is rented."""
    rec, texts = answers_both(MAC_VLLM)
    v = rec.verdict
    assert v.state == "blocked" and v.fix == "llamacpp:fp16"
    assert v.fixed_bytes is not None and v.fixed_bytes < 0.8 * rec.named.usable_bytes
    assert "vllm_needs_cuda_rocm_or_xpu" in {p.code for p in rec.pitfalls}
    assert rec.options == []
    head = {lang: text.split("\n")[1:3] for lang, text in texts.items()}
    assert "which this card cannot run" in head["en"][0]
    assert "no official build" in head["en"][1]
    assert "GGUF fp16" in head["en"][1] and "llama.cpp" in head["en"][1]
    assert "这张卡跑不了它" in head["zh"][0] and "官方版本" in head["zh"][1]
    assert "GGUF fp16" in head["zh"][1] and "「llama.cpp」" in head["zh"][1]
    for lang, text in texts.items():
        assert "OOM" not in text
        assert not inv.contradictions(text, lang)


def test_sglang_on_an_arc_card_takes_the_same_route() -> None:
    """SGLang has CUDA and ROCm builds only: on an Intel Arc the route is llama.cpp too."""
    rec, texts = answers_both("intel arc a770 16g qwen2.5-7b sglang")
    assert rec.verdict.state == "blocked" and rec.verdict.fix == "llamacpp:fp16"
    assert "llama.cpp" in texts["en"].split("\n")[2]
    assert "「llama.cpp」" in texts["zh"].split("\n")[2]


def test_a_mac_the_llama_cpp_route_does_not_fit_either_says_so() -> None:
    """Qwen2.5-72B in 16-bit is ~145 GiB under llama.cpp too: no route is claimed to fit,
    the ⛔ reason and the shortage are said, and a rented card is offered as the
    alternative it is."""
    rec, texts = answers_both("m2 max 64gb qwen2.5-72b vllm")
    v = rec.verdict
    assert v.state == "blocked" and v.fix is None
    assert "vllm_needs_cuda_rocm_or_xpu" in {p.code for p in rec.pitfalls}
    assert rec.options
    assert "no official build" in texts["en"].split("\n")[2]
    assert "官方版本" in texts["zh"].split("\n")[2]
    assert "cannot run this; to rent instead" in texts["en"]
    for lang, text in texts.items():
        assert "GGUF" not in text.split("\n")[2]
        assert not inv.contradictions(text, lang)
