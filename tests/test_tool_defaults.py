"""The precision an answer assumes follows the program the user named and the card: the
official openai-whisper package builds its model in fp32 ("官方whisper" is that package),
segment-anything's SAM runs in fp32, and a card without bf16 is never answered in bf16.
The named program is kept: its family word said again is not a second model."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def _answer(q: str, lang: str) -> str:
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, canonical=q, view="full", plain=True)


OFFICIAL_WHISPER = {
    "zh": "whisper medium 用官方whisper 转录 4g显卡 够吗",
    "en": "whisper medium with the official whisper on a 4gb card, enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_official_whisper_package_is_answered_in_fp32_and_does_not_fit_4gb(lang: str) -> None:
    parsed = parse_query(OFFICIAL_WHISPER[lang])
    assert parsed.workload.framework == "openai-whisper"
    said = _answer(OFFICIAL_WHISPER[lang], lang)
    head = said.splitlines()[0]
    assert "fp32" in head and "bf16" not in said, said
    assert "❌" in said.splitlines()[2], said
    # "whisper" said again is the same model, not a second one to ask about separately
    assert "large-v3" not in said, said
    # openai-whisper is its own PyTorch program, not transformers
    assert "transformers" not in said.split("\n\n")[-1], said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sam_is_answered_in_fp32_as_segment_anything_runs_it(lang: str) -> None:
    said = _answer("sam vit-h inference on a 6gb card", lang)
    assert "fp32" in said.splitlines()[0], said
    assert {"zh": "权重精度 fp32", "en": "weights in fp32"}[lang] in said, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_card_without_bf16_is_not_answered_in_bf16(lang: str) -> None:
    said = _answer("whisper medium 转录 2080ti 够吗", lang)
    head, assumed = said.splitlines()[0], said.split("\n\n")[-1]
    assert "fp16" in head and "bf16" not in head and "bf16" not in assumed, said
