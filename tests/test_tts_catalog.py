"""Text-to-speech models are catalog models: each entry's size is the sum of the parts its
own inference script puts on the GPU, in the precision that script loads them in
(data/models/tts.toml), and a question naming one gets an answer in both languages instead
of "which model?" / "I don't know that model"."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from tests.conftest import plain_answer


def _model(model_id: str):  # noqa: ANN202
    return catalog.models()[model_id]


def test_each_entry_holds_its_parts_at_its_scripts_precision() -> None:
    # CosyVoice 2: Qwen2.5-0.5B LM (0.49B) + flow.pt (~0.11B) + hift.pt (~0.02B), fp16=False
    cv = _model("cosyvoice2-0.5b")
    assert cv.params_b == pytest.approx(0.49 + 0.11 + 0.02, abs=0.02)
    assert cv.default_format == "fp32"
    assert cv.arch is not None and cv.arch.hidden == 896 and cv.arch.kv_heads == 2
    # F5-TTS Base: DiT 336M (paper Table 1) + Vocos 13.5M, fp16 on CUDA (utils_infer.py)
    f5 = _model("f5-tts")
    assert f5.params_b == pytest.approx(0.336 + 0.0135, abs=0.005)
    assert f5.default_format == "fp16"
    # GPT-SoVITS v2: GPT ~0.08B + SoVITS ~0.05B + chinese-hubert-base 0.095B
    # + chinese-roberta-wwm-ext-large 0.326B, is_half on CUDA
    gs = _model("gpt-sovits-v2")
    assert gs.params_b == pytest.approx(0.08 + 0.05 + 0.095 + 0.326, abs=0.01)
    assert gs.default_format == "fp16"
    assert _model("kokoro-82m").params_b == pytest.approx(0.082)
    for model_id in ("chattts", "xtts-v2", "spark-tts-0.5b", "openaudio-s1-mini", "indextts"):
        assert _model(model_id).family == "tts" and _model(model_id).arch is not None


@pytest.mark.parametrize(
    ("question", "model_id"),
    [
        ("cosyvoice2 推理 需要多少显存", "cosyvoice2-0.5b"),
        ("cosyvoice2 推理 3060 够吗", "cosyvoice2-0.5b"),
        ("f5-tts 推理 3060", "f5-tts"),
        ("f5-tts inference on a 6gb card", "f5-tts"),
        ("chattts 推理 显存", "chattts"),
        ("gpt-sovits v2 推理 显存", "gpt-sovits-v2"),
        ("gpt-sovits 训练 4060 8g", "gpt-sovits-v2"),
    ],
)
def test_a_tts_question_names_its_model(question: str, model_id: str) -> None:
    w = parse_query(question).workload
    assert w is not None and w.model == model_id, w


@pytest.mark.parametrize(
    ("question", "name", "fmt"),
    [
        ("cosyvoice2 推理 3060 够吗", "CosyVoice 2", "fp32"),
        ("f5-tts inference on a 6gb card", "F5-TTS", "fp16"),
        ("gpt-sovits v2 推理 显存", "GPT-SoVITS v2", "fp16"),
    ],
)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_answer_states_the_model_and_its_scripts_precision(
    question: str, name: str, fmt: str, lang: str
) -> None:
    text = plain_answer(question, lang)
    head = text.splitlines()[0]
    assert name in head and fmt in head, head


@pytest.mark.parametrize(
    ("question", "tokens"),
    [
        # 30 s (ChatTTS README's clip) x 93.75 mel frames a second (24 kHz, hop 256)
        ("f5-tts inference on a 6gb card", 2813),
        # 30 s x CosyVoice 2's 25 Hz speech tokens
        ("cosyvoice2 推理 3060 够吗", 750),
    ],
)
def test_the_sequence_is_the_assumed_speech_in_tokens(question: str, tokens: int) -> None:
    from advisor.memory import estimate

    w = parse_query(question).workload
    assert w is not None
    assumed = {a.field: a.value for a in estimate(w).assumed}
    assert assumed["speech_seconds"] == "30" and assumed["context_tokens"] == str(tokens), assumed


@pytest.mark.parametrize(("lang", "phrase"), [("zh", "按 30 秒语音算"), ("en", "30 s of speech")])
def test_the_answer_says_the_length_of_speech_assumed(lang: str, phrase: str) -> None:
    assert phrase in plain_answer("f5-tts inference on a 6gb card", lang)


@pytest.mark.parametrize(
    ("lang", "phrase"),
    [
        ("zh", "本引擎对 TTS 模型只细算推理"),
        ("en", "the engine sizes TTS models for inference only"),
    ],
)
def test_a_tts_training_answer_says_its_figure_is_a_generic_fine_tune(
    lang: str, phrase: str
) -> None:
    assert phrase in plain_answer("gpt-sovits 训练 4060 8g", lang)
    assert phrase not in plain_answer("gpt-sovits v2 推理 显存", lang)


@pytest.mark.parametrize(("lang", "grid"), [("zh", "能不能跑这个模型"), ("en", "run this model?")])
def test_a_tts_answer_has_no_context_grid(lang: str, grid: str) -> None:
    # its sequence is the speech it generates, not a 4k / 32k / 128k context to pick
    assert grid not in plain_answer("f5-tts 推理 3060", lang)
    assert grid in plain_answer("qwen2.5-7b 推理 3060", lang)
