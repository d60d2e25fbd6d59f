"""Money is shown without false precision, by the one function that formats it
(advisor/units.py figure): whole units from 100 up, else three significant digits."""

from __future__ import annotations

import re

import pytest

from advisor.__main__ import main
from advisor.render import amount, figure


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (32544.15, "32,544"),
        (478.08, "478"),
        (47.84, "47.8"),
        (4.98, "4.98"),
        (10.32, "10.3"),
        (0.125, "0.125"),
        (100.0, "100"),
    ],
)
def test_figure_rounds(value: float, shown: str) -> None:
    assert figure(value) == shown


def test_amount_uses_figure() -> None:
    assert amount(32544.15, "CNY") == "¥32,544"
    assert amount(478.08, "USD") == "$478"


def test_answers_show_no_cents_on_large_sums(capsys: pytest.CaptureFixture[str]) -> None:
    """The reviewed questions: a whole-job cost and a 96-card hourly total."""
    for q in ("训练 7B 模型 100B tokens 要多久 64张h100", "10000个用户同时用 qwen 72b 要多少卡"):
        main([q, "--lang", "zh", "--offline"])
        text = capsys.readouterr().out
        big = re.findall(r"[¥$]([\d,]+\.\d+)", text)
        assert not [b for b in big if float(b.replace(",", "")) >= 100], (q, big)
        assert not re.search(r"[¥$]\d+\.\d{3,}", text)
