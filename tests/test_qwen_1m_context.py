"""Qwen2.5-7B-Instruct-1M and 14B-Instruct-1M are catalog models with their own window
(max_position_embeddings 1010000), a "1m" context is a million tokens ("满1m上下文", "full 1M
context", "上下文1m"; "1m上下文" is not "about 1 MB", nor "full" a full fine-tune), and the
answer gives Qwen's stated total VRAM for 1M tokens (120 GB for 7B, 320 GB for 14B, with
its vLLM branch) in both languages."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.models.choices import Mode
from advisor.parse import parse_query
from tests.conftest import plain_answer


def test_the_1m_models_carry_their_window() -> None:
    for model_id in ("qwen2.5-7b-instruct-1m", "qwen2.5-14b-instruct-1m"):
        arch = catalog.models()[model_id].arch
        assert arch is not None and arch.max_context_tokens == 1_010_000


@pytest.mark.parametrize(
    "question",
    [
        "vllm 跑 qwen2.5-7b-instruct-1m 想开满1m上下文 4张a100 80g 够吗",
        "vllm 跑 qwen2.5-7b-instruct-1m 上下文1m 4张a100 80g",
        "vllm qwen2.5-7b-instruct-1m full 1M context on 4x a100 80g",
    ],
)
def test_a_1m_context_is_a_million_tokens(question: str) -> None:
    parsed = parse_query(question)
    w = parsed.workload
    assert w is not None and w.model == "qwen2.5-7b-instruct-1m", parsed
    assert w.context_tokens == 1_000_000 and w.mode == Mode.inference, w
    assert not parsed.ignored, parsed.ignored


def test_an_approximate_size_is_still_read_as_one() -> None:
    parsed = parse_query("qwen2.5-7b 推理 需要9g上下的显存 4090")
    assert parsed.gpu_id == "rtx-4090" and not parsed.ignored, parsed


Q = {
    "zh": "vllm 跑 qwen2.5-7b-instruct-1m 想开满1m上下文 4张a100 80g 够吗",
    "en": "vllm qwen2.5-7b-instruct-1m with the full 1M context on 4x a100 80g, enough?",
}
WORDS = {"zh": "至少要 120 GB", "en": "at least 120 GB"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_answer_gives_qwens_stated_requirement(lang: str) -> None:
    text = plain_answer(Q[lang], lang)
    assert "Qwen2.5 7B Instruct 1M" in text and "1000000" in text, text
    assert WORDS[lang] in text and "320 GB" in text, text


def test_the_requirement_is_not_said_at_a_short_context() -> None:
    text = plain_answer("vllm qwen2.5-7b-instruct-1m 32k context on 4x a100 80g", "en")
    assert "at least 120 GB" not in text, text
