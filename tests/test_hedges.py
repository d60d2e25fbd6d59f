"""One answer never says two things: a headline that runs the job with a change has no bare
"⛔ will run out of memory" beneath it (it is the setup as asked, said so), and the band's
high end is said only where it crosses the card, as what it is (setups like this ran up to
N% above the estimate), never on a fit with more than half the card free."""

from __future__ import annotations

import re

import pytest

from tests.conftest import plain_answer

YI_ON_A10 = {
    "zh": "yi-34b-chat 4bit awq vllm 单张a10 24g 能起来吗",
    "en": "yi-34b-chat 4bit awq vllm on a single a10 24gb, will it start?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_headline_that_runs_with_a_change_has_no_bare_oom_beneath(lang: str) -> None:
    said = plain_answer(YI_ON_A10[lang], lang)
    verdict = said.splitlines()[2]
    assert "--enforce-eager" in verdict, said
    assert "⛔" not in said.split("\n\n", 1)[1].replace("⛔ 这张卡跑不了", "").replace(
        "⛔ the card cannot run", ""
    ), said
    assert {"zh": "按原样（不做上面的改动）", "en": "As asked (without the change above)"}[
        lang
    ] in said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_fit_with_more_than_half_the_card_free_is_not_hedged(lang: str) -> None:
    q = {
        "zh": "mmdet 训练 cascade rcnn r50 单卡 batch 2 12g显卡 够吗",
        "en": "mmdet train cascade rcnn r50 single card batch 2 on a 12gb card, enough?",
    }[lang]
    verdict = plain_answer(q, lang).splitlines()[2]
    assert verdict.startswith("✅"), verdict


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_hedge_says_how_far_above_the_estimate_setups_ran(lang: str) -> None:
    q = {
        # FLUX in NF4 under diffusers, quantized while loading: a level of +38%, narrow
        # enough to say (rank.HEDGE_MAX_HIGH)
        "zh": "flux.1-schnell nf4 3090 够吗",
        "en": "flux.1-schnell nf4 on 3090",
    }[lang]
    verdict = next(x for x in plain_answer(q, lang).splitlines() if x.startswith(("✅", "⚠️")))
    shape = {
        "zh": r"实测最多比估算高 (\d+)%，即约 [\d.]+ GiB，超过可用的 [\d.]+ GiB",
        "en": r"ran up to (\d+)% above the estimate, about [\d.]+ GiB, more than the [\d.]+ GiB usable",
    }[lang]
    m = re.search(shape, verdict)
    assert m is not None and 0 < int(m.group(1)) < 200, verdict
