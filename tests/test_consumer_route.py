"""A diffusion job too big for a 24 GB card, asked with no card named: beside the 80 GB
picks the answer says what it runs as on the 24 GB card most lab members own (the
small-card recipe, a smaller format at less offload, and for Wan2.1-14B the 480P size and
the 1.3B model its README gives: 8.19 GB, a 5 s video in about 4 minutes on a 4090)."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def answer(line: str, lang: str) -> tuple[object, str]:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="USD" if lang == "en" else "CNY")
    return rec, render("answer", lang, rec=rec, parsed=parsed, canonical=line, plain=True)


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        ("想用wan2.1 14b生成视频 要多大显存", "zh", ["832×480", "Wan2.1-T2V-1.3B", "8.19 GB"]),
        ("wan2.1 14b 生成视频需要什么卡", "zh", ["24 GB", "Wan2.1-T2V-1.3B"]),
        ("how much vram for wan2.1 14b text to video", "en", ["832×480", "Wan2.1-T2V-1.3B"]),
        ("flux.1-dev fp16 how much vram", "en", ["On a 24 GB card", "in fp8 without offload"]),
        ("flux dev fp16 需要多大显存", "zh", ["只有 24 GB 卡", "改存 fp8 权重、不卸载"]),
    ],
)
def test_a_job_too_big_for_24gb_says_how_it_runs_on_one(line: str, lang: str, said: list) -> None:
    rec, text = answer(line, lang)
    assert rec.named is None
    assert any(p.code == "consumer_card_route" for p in rec.pitfalls)
    for s in said:
        assert s in text, (s, text)


@pytest.mark.parametrize("line", ["sdxl vram", "sd 1.5 vram", "flux dev fp16 on my 4090"])
def test_no_route_note_where_the_job_runs_on_24gb_or_a_card_is_named(line: str) -> None:
    rec, _ = answer(line, "en")
    assert not any(p.code == "consumer_card_route" for p in rec.pitfalls)
