"""A non-autoregressive TTS model (F5-TTS's flow-matching DiT, data/models/tts.toml
`autoregressive = false`) is sized as its weights and the DiT's activations over the mel
frames of the utterance, the guided and unguided passes in one batch of two (F5-TTS
backbones/dit.py cfg_infer), with no KV cache and no tokens-per-second speed; an
autoregressive one keeps its speech tokens' KV cache, its speed said in speech tokens a
second, not a chat model's tok/s."""

from __future__ import annotations

import pytest

from advisor.memory import estimate
from advisor.parse import parse_query
from tests.conftest import plain_answer

F5 = {"zh": "f5-tts 推理 4gb gtx 1650", "en": "f5-tts inference, 4gb gtx 1650"}


def _terms(question: str) -> dict[str, int]:
    w = parse_query(question).workload
    assert w is not None
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.bytes for t in est.terms}


def test_a_flow_model_has_activations_over_its_frames_and_no_kv_cache() -> None:
    terms = _terms(F5["en"])
    assert "kv_cache" not in terms, terms
    # 2 passes x 2813 mel frames (30 s at 93.75 a second) x (3 x 1024 + 3 x 2048) x 2 B
    assert terms["activations"] == pytest.approx(2 * 2813 * (3 * 1024 + 3 * 2048) * 2, rel=0.01)


def test_an_autoregressive_tts_model_keeps_its_kv_cache() -> None:
    assert _terms("cosyvoice2 推理 3060 够吗")["kv_cache"] > 0


@pytest.mark.parametrize(
    ("lang", "kv", "act"),
    [("zh", "KV 缓存", "激活"), ("en", "KV cache", "activations")],
)
def test_the_answer_has_no_kv_cache_and_no_token_speed(lang: str, kv: str, act: str) -> None:
    text = plain_answer(F5[lang], lang)
    assert "tok/s" not in text and "torch.cat" not in text, text
    assert kv not in text and act in text, text


@pytest.mark.parametrize(
    ("lang", "unit"), [("zh", "语音 token/秒"), ("en", "speech tokens/s per request")]
)
def test_an_autoregressive_tts_speed_is_in_speech_tokens(lang: str, unit: str) -> None:
    text = plain_answer("cosyvoice2 推理 3060 够吗", lang)
    assert unit in text and "tok/s" not in text, text
    # a chat model keeps its tokens per second
    chat = plain_answer("qwen2.5-7b 推理 3060", lang)
    assert "tok/s" in chat and "语音 token" not in chat and "speech tokens" not in chat
