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
    assert gs.arch is not None and gs.arch.max_context_tokens == 54 * 50  # max_sec x hz
    # ChatTTS: GPT 20 x 768 (config.py) ~0.225B + Decoder/DVAE ~0.04B + Vocos, rounded up
    assert _model("chattts").params_b == pytest.approx(0.3)
    # XTTS-v2: the v2 recipe's 1026 audio tokens; positions (605+3) + (402+2) + 70
    xt = _model("xtts-v2")
    assert xt.arch is not None and xt.arch.vocab == 1026 and xt.arch.max_context_tokens == 1082
    # IndexTTS 1.5 (config.yaml version 1.5): GPT 24 x 1280 0.47B + embeddings/heads 0.05B
    # + conditioning ~0.03B + BigVGAN ~0.11B, rounded up; 800 mel + 600 text tokens
    ix = _model("indextts")
    assert ix.params_b == pytest.approx(0.472 + 0.052 + 0.03 + 0.11, abs=0.05)
    assert ix.arch is not None and ix.arch.hidden == 1280 and ix.arch.max_context_tokens == 1400
    for model_id in ("chattts", "xtts-v2", "spark-tts-0.5b", "indextts"):
        assert _model(model_id).family == "tts" and _model(model_id).arch is not None


def test_each_entry_says_what_was_read_in_its_repository() -> None:
    tts = [m for m in catalog.models().values() if m.family == "tts"]
    assert len(tts) == 8
    for m in tts:
        assert m.verified and "repository" in m.verified, m.id
        assert "@" in m.source and ("2026-12-07" in m.source or "2026-12-08" in m.source), m.id


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("question", ["kokoro 推理 显存", "fish-speech 推理 显存"])
def test_a_tts_model_without_a_readable_config_is_not_sized(
    question: str, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Kokoro's PL-BERT and OpenAudio S1-mini's shapes are in no repository file: no guess
    from advisor.__main__ import main

    assert parse_query(question).workload is None
    main([question, "--lang", lang])
    text = capsys.readouterr().out
    assert "GiB" not in text and ("Which model" in text or "哪个模型" in text), text


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
        ("index-tts 推理 显存", "IndexTTS 1.5", "fp16"),
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


def test_megatts3_is_its_gpu_parts_with_a_flow_dit() -> None:
    # bytedance/MegaTTS3 @f506233: DiT backbone 0.45B (readme), G2P a Qwen2.5-0.5B (0.49B),
    # Whisper-style aligner 6+6 x 512 (~0.05B), WaveVAE 0.256B counted from wavvae_v3.py's
    # modules, duration LM ~0.1B; all loaded without a cast (fp32), the DiT 24 x 1024, FFN
    # 2048, 25 Hz WaveVAE latents
    mt = _model("megatts3")
    assert mt.params_b == pytest.approx(0.45 + 0.49 + 0.05 + 0.256 + 0.1, abs=0.02)
    assert mt.default_format == "fp32"
    assert mt.arch is not None and (mt.arch.layers, mt.arch.hidden) == (24, 1024)
    assert mt.arch.intermediate == 2048 and not mt.arch.gated_mlp


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_megatts3_gets_a_sized_answer_without_a_kv_cache(lang: str) -> None:
    q = "megatts3 推理 3060 够吗" if lang == "zh" else "megatts3 inference on a 3060, enough?"
    parsed = parse_query(q)
    assert parsed.ok and parsed.workload is not None and parsed.workload.model == "megatts3"
    text = plain_answer(q, lang)
    assert "MegaTTS 3" in text and "tts/infer_cli.py" in text
    assert "KV" not in text and "tok/s" not in text
