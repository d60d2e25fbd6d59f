"""Near a card's limit the answer uses the band's high end and says so: where the figure
fits the card but measured setups like it ran past the card's memory, every verdict on
that card says "may not fit: measured setups like this ran up to N% above the estimate, about
X", in both languages:
the answer, the first reply, a pick judged tight, a side of a card comparison."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor import render
from advisor.__main__ import main
from advisor.kinds import answer_kind
from advisor.kinds.compare import CompareAnswer
from advisor.parse import parse_query
from advisor.recommend import recommend_query

SAID = {
    "zh": "可能装不下：类似配置的实测最多比估算高 {pct}%，即约 {high}",
    "en": "may not fit: measured setups like this ran up to {pct}% above the estimate, about {high}",
}


def said(lang: str, estimate: int, high: int) -> str:
    """The hedge as the answers word it (templates/*/macros.jinja), lower-cased."""
    pct = round((high / estimate - 1) * 100)
    return SAID[lang].format(pct=pct, high=render.gib(high)).lower()


# a measured level narrow enough to inform (llama.cpp, GGUF stored: +15%; rank.HEDGE_MAX_HIGH)
LINE = {
    "zh": "w7900 48g ollama qwen2.5-72b q4_k_m 速度",
    "en": "qwen2.5-72b q4_k_m on ollama, a w7900 48gb, how fast",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_answer_on_a_card_within_the_band_says_it_may_not_fit(
    lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = recommend_query(parse_query(LINE[lang]), default_currency="CNY")
    named = rec.named
    assert named is not None and named.fits and named.measured_up_to_bytes
    assert named.per_gpu_bytes <= named.usable_bytes < named.measured_up_to_bytes
    main([LINE[lang], "--lang", lang, "--offline"])
    text = capsys.readouterr().out
    assert said(lang, named.per_gpu_bytes, named.measured_up_to_bytes) in text.lower(), text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_pick_judged_tight_within_the_band_says_it_may_not_fit(lang: str) -> None:
    """A tight pick ("⚠️ Runs, tight (8% headroom).") said nothing of the band."""
    rec = recommend_query(parse_query(LINE[lang]), default_currency="CNY")
    assert rec.named is not None
    tight = replace(rec.named, risky=True, fix=None)
    macros = render._env().get_template(f"{lang}/macros.jinja").make_module({"label": render.label})
    text = str(macros.pick_verdict(tight, rec))
    assert tight.measured_up_to_bytes is not None
    assert said(lang, tight.per_gpu_bytes, tight.measured_up_to_bytes) in text.lower(), text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_side_of_a_card_compare_within_the_band_says_it_may_not_fit(lang: str) -> None:
    parsed = parse_query("ollama跑qwen2.5-72b q4_k_m 买w7900还是a6000")
    answer = answer_kind(parsed, "CNY")
    assert isinstance(answer, CompareAnswer)
    text = render.render("compare", lang, plain=True, result=answer, parsed=parsed)
    for side in answer.sides:
        assert side.measured_up_to_bytes and side.per_card_bytes, side
        assert said(lang, side.per_card_bytes, side.measured_up_to_bytes) in text.lower(), text
