"""A flow TTS model whose program decodes its latents to audio on the GPU carries the
decoder's own term: MegaTTS 3's WaveVAE decoder (bytedance/MegaTTS3 @f506233,
tts/infer_cli.py forward, tts/modules/wavvae/decoder/wavvae_v3.py and hifigan_modules.py)
runs in fp32 over prompt and speech at 24 kHz and keeps the weight_norm-recomputed copy
of its conv weights (data/models/tts.toml [tts."megatts3".waveform_decoder])."""

from __future__ import annotations

import pytest

from advisor.memory import estimate, tts
from advisor.parse import parse_query
from advisor.wording import formula
from tests.conftest import plain_answer

GIB = 2**30


def _decoder() -> dict:
    return tts._table()["tts"]["megatts3"]["waveform_decoder"]


def test_the_decoder_figures_are_the_repositorys() -> None:
    dec = _decoder()
    # Generator(ngf 128, ratios [5, 4, 4, 3]): the last stage is 128 channels at 24 kHz
    assert dec["sample_rate"] == 24000 == 100 * 5 * 4 * 4 * 3
    # Upsample(256, 3)'s two 256-channel maps + the held 256-channel input at 8 kHz (x2)
    # + the 128-channel conv output: the hand count's 683; the CPU trace's 640 a sample
    assert 640 <= dec["values_per_sample"] <= 2 * 256 + 2 * 256 / 3 + 128
    assert dec["bytes_per_value"] == 4  # decode runs outside the autocast, on .float()
    # Generator 0.2252B + latent Upsample 0.0009B, each conv under weight_norm
    assert dec["weight_copy_b"] == pytest.approx(0.2252 + 0.0009, abs=0.0002)


def _term(q: str):  # noqa: ANN202
    parsed = parse_query(q)
    assert parsed.ok and parsed.workload is not None
    est = estimate(parsed.workload).estimate
    assert est is not None
    return [t for t in est.terms if t.name == "waveform_decode"]


def test_thirty_seconds_of_speech_decode_to_the_traced_working_set() -> None:
    # the assumed 30 s (prompt and speech) at 25 Hz latents: 750 frames, 720,000 samples
    terms = _term("megatts3 inference on a 3060")
    assert len(terms) == 1
    working = 30 * 24000 * 640 * 4
    copy = 0.2261e9 * 4
    assert terms[0].bytes == pytest.approx(working + copy, rel=1e-6)
    # the trace: +58.65 MiB a second of audio, 862 MiB intercept
    assert working / 30 / 2**20 == pytest.approx(58.65, abs=0.1)
    assert copy / 2**20 == pytest.approx(862, abs=2)


@pytest.mark.parametrize("model", ["f5-tts", "cosyvoice2-0.5b", "indextts"])
def test_other_tts_models_have_no_such_decoder_term(model: str) -> None:
    assert _term(f"{model} inference on a 3060") == []


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_term_is_named_and_explained_in_both_languages(lang: str) -> None:
    q = "megatts3 推理 3060 够吗" if lang == "zh" else "megatts3 inference on a 3060, enough?"
    text = plain_answer(q, lang)
    name = "波形解码器峰值" if lang == "zh" else "waveform decoder peak"
    assert name in text
    (term,) = _term(q)
    line = formula(lang, term)
    assert "24000" in line and "640" in line and "weight_norm" in line
