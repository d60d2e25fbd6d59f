"""FramePack on an 8 GB card: its own low-VRAM mode is named with its setting (demo_gradio.py
gpu_memory_preservation, default 6 GB; README minimum 6 GB), not only diffusers' offload
(data/pitfalls.toml [own_levers.models.framepack])."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

QUESTIONS = {
    "zh": "framepack 生成视频 rtx 3070 8g 能跑吗",
    "en": "framepack image to video on an rtx 3070 8gb, will it run?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_framepack_on_8_gb_runs_and_names_its_preserved_memory_setting(lang: str) -> None:
    parsed = parse_query(QUESTIONS[lang])
    rec = recommend_query(parsed, default_currency="CNY")
    assert rec.verdict.state != "no_fit"
    text = render("answer", lang, rec=rec, parsed=parsed, canonical=QUESTIONS[lang], plain=True)
    assert "gpu_memory_preservation" in text and "6 GB" in text


def test_hunyuanvideo_itself_does_not_get_framepack_s_setting() -> None:
    q = "hunyuanvideo 720p 生成视频 rtx 3070 8g 能跑吗"
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY")
    text = render("answer", "zh", rec=rec, parsed=parsed, canonical=q, plain=True)
    assert "gpu_memory_preservation" not in text
