"""Everyday phrasing reaches the answer it asks for: spoken "what can it run" forms get the
card's capability list, "buy A or B" gets the two cards side by side with their prices to
buy beside the rental ones (not a plan of other cards)."""

from __future__ import annotations

import pytest

from advisor.__main__ import main


def _text(line: str, lang: str, capsys: pytest.CaptureFixture[str]) -> str:
    main([line, "--lang", lang, "--offline"])
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("实验室有两张3090，能跑点啥", "zh"),
        ("两张3090跑得了啥", "zh"),
        ("what can I do with 2x 3090", "en"),
    ],
)
def test_a_spoken_what_can_it_run_gets_the_capability_list(
    line: str, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _text(line, lang, capsys)
    assert "3090" in text and ("QLoRA" in text and "LoRA" in text), text
    assert "哪个模型" not in text and "Which model" not in text, text


@pytest.mark.parametrize(
    ("line", "lang", "buy"),
    [
        ("跑70b量化 买4090还是a6000", "zh", "买约"),
        ("4090和a6000买哪个", "zh", "买约"),
        ("70b q4: should I buy a 4090 or an a6000", "en", "buy ≈"),
    ],
)
def test_buy_a_or_b_compares_the_two_cards_with_their_prices_to_buy(
    line: str, lang: str, buy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _text(line, lang, capsys)
    assert "RTX 4090" in text and "RTX A6000" in text, text
    assert text.count(buy) == 2, text  # each card's price to buy, beside its rental price
    assert "4060" not in text, text  # not a purchase plan of other cards
