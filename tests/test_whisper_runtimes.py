"""Whisper as people run it: openai-whisper (fp32 model, fp16 checkpoint loaded beside it),
faster-whisper / WhisperX (CTranslate2, weights in the compute type) and transformers
(advisor/memory/runtimes/whisper.py, data/runtimes.toml [openai_whisper])."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query

GB = 1e9


def _total(model: str, framework: str | None) -> float:
    return estimate(Workload(model=model, framework=framework)).estimate.total_bytes


def test_openai_whisper_needs_what_its_readme_says():
    """openai/whisper README "Required VRAM": large ~10 GB, turbo ~6 GB, medium ~5 GB, small
    ~2 GB. Expected: each at least that (an under-estimate is the costly miss) and not
    more than 1.3x it."""
    for model, readme_gb in (
        ("whisper-large-v3", 10),
        ("whisper-large-v3-turbo", 6),
        ("whisper-medium", 5),
        ("whisper-small", 2),
    ):
        got = _total(model, "openai-whisper") / GB
        assert readme_gb * 0.95 <= got <= readme_gb * 1.45, (model, got)


def test_faster_whisper_keeps_the_weights_in_half_precision_and_needs_half_as_much():
    """faster-whisper's own benchmark (large-v2, fp16, beam 5): 4525 MB; openai-whisper's
    fp32 model needs about twice that. Expected: faster-whisper as transformers counts it,
    under half of openai-whisper's load peak."""
    fast = _total("whisper-large-v3", "faster-whisper")
    assert fast == _total("whisper-large-v3", None)
    assert fast < 0.5 * _total("whisper-large-v3", "openai-whisper")
    assert 4.0 * GB < fast < 5.5 * GB


def test_openai_whisper_states_its_fp32_weights_and_load_peak():
    r = estimate(Workload(model="whisper-large-v3", framework="openai-whisper"))
    assumed = {a.field: a.value for a in r.assumed}
    assert assumed["weights_format"] == "fp32"
    assert [t.formula_key for t in r.estimate.terms if t.name == "weights"] == [
        "weights.whisper_load"
    ]
    told = estimate(
        Workload(model="whisper-large-v3", framework="openai-whisper", weights_format="fp16")
    )
    # "fp16" is transcribe's compute type: load_model still builds the fp32 model
    assert told.estimate.total_bytes == r.estimate.total_bytes


def test_the_program_is_read_beside_the_model_name():
    for text, framework in (
        ("openai-whisper large-v3 on 3060", "openai-whisper"),
        ("faster-whisper large-v3 on 3060", "faster-whisper"),
        ("whisperx large-v3", "faster-whisper"),
        ("whisper medium 用 openai whisper 跑", "openai-whisper"),
        ("whisper large-v3 on 3060", None),
    ):
        p = parse_query(text)
        assert p.ok, text
        assert p.workload.model.startswith("whisper-") and p.workload.framework == framework


# --- the card's own runtime: Whisper is no model llama.cpp / Ollama serve --------------------


def _parsed(line: str):  # noqa: ANN202
    p = parse_query(line)
    assert p.ok and p.ignored == [], (line, p.error, p.ignored)
    return p


def test_whisper_on_a_pascal_card_is_faster_whisper_int8_not_a_llama_cpp_gguf():
    """ "whisper large-v3 转录 1080ti行不行" was sized as a llama.cpp GGUF Q4_K_M LLM (the
    Pascal rule for LLMs). CTranslate2 runs int8 on compute capability 6.1 and has no float16
    there (its docs/quantization.md): faster-whisper int8, said as an assumption."""
    for line in (
        "whisper large-v3 转录 1080ti行不行",
        "whisper large-v3 on a p40",
        "p40 跑 whisper",
    ):
        w = _parsed(line).workload
        assert (w.framework, w.weights_format, w.runtime) == ("faster-whisper", "int8", None), line
    p = _parsed("whisper large-v3 转录 1080ti行不行")
    assert any(a.startswith("speech_runtime_on_pascal") for a in p.assumed)
    # an LLM on the same card is still answered for llama.cpp and its GGUF files
    llm = _parsed("qwen2.5-7b 1080ti").workload
    assert llm.runtime == "llamacpp" and llm.weights_format == "q4_k_m"


def test_faster_whisper_on_a_pascal_card_holds_fp32_weights_not_fp16():
    """CTranslate2 loads float16 as float32 on compute capability 6.x (implicit type
    conversion on load): faster-whisper named on a P40 without a type holds fp32 weights,
    twice the fp16 count, and decodes at half the fp16 speed (twice the bytes per token)."""
    w = _parsed("faster-whisper large-v3 on a p40").workload
    assert w.weights_format == "fp32"
    fp32 = estimate(w).estimate.total_bytes
    fp16 = estimate(w.model_copy(update={"weights_format": "fp16"})).estimate.total_bytes
    assert fp32 > fp16 + 2.5 * GB
    assert _parsed("faster-whisper large-v3 int8 on a p40").workload.weights_format == "int8"
    # a card with float16 keeps it
    assert _parsed("faster-whisper large-v3 on a 3090").workload.weights_format is None


def test_every_non_llm_kind_on_pascal_mac_and_radeon_gets_its_own_runtime():
    """Whisper, SDXL, YOLO and BERT on a P40, a 1080 Ti, a Mac and a 7900 XTX: none is
    answered for llama.cpp or a GGUF type (that rule is for LLMs)."""
    for card in ("p40", "1080ti", "m2 max 64g", "7900xtx"):
        for model in ("whisper large-v3", "sdxl", "yolov8m 推理", "bert-base 推理"):
            w = _parsed(f"{model} {card}").workload
            assert w.runtime != "llamacpp" and not (w.weights_format or "").startswith("q"), (
                card,
                model,
                w,
            )


def test_the_pascal_whisper_answer_names_its_program_not_llama_cpp(capsys) -> None:  # noqa: ANN001
    from advisor.__main__ import main

    main(["whisper large-v3 转录 1080ti行不行", "--lang", "zh", "--offline"])
    text = capsys.readouterr().out
    assert "faster-whisper" in text and "int8" in text, text
    assert "llama.cpp" not in text.splitlines()[0], text  # the header: the program sized
    for wrong in ("GGUF", "Q4_K_M", "q4_k_m", "Ollama 默认", "SDPA", "运行框架：transformers"):
        assert wrong not in text, (wrong, text)


def test_faster_whisper_and_whisperx_state_ctranslate2s_float16_not_bf16():
    """Not told a compute type, WhisperX runs float16 (`--compute_type` default) and
    faster-whisper the converted model's float16 (data/runtimes.toml [ctranslate2])."""
    for text in ("whisperx large-v2 batch 16", "faster-whisper large-v3 batch 4"):
        result = estimate(parse_query(text).workload)
        assumed = {a.field: a.value for a in result.assumed}
        assert assumed["weights_format"] == "fp16", text
