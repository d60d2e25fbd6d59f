"""In yuan, a card under the US export rule is priced as the China SKU of the same memory
sold in its place (the RTX 4090 as the 4090 D, ¥12,999, purchase_prices.toml), named so;
a card with no such SKU is said to be hard to buy new there. In dollars nothing changes."""

from __future__ import annotations

import pytest

from advisor.kinds import answer_kind
from advisor.kinds.compare import CompareAnswer
from advisor.kinds.purchase import PurchaseAnswer
from advisor.kinds.purchase_costs import buy_price, china_sku_for
from advisor.parse import parse_query
from advisor.render import render


def _purchase(line: str, currency: str) -> tuple[PurchaseAnswer, str]:
    parsed = parse_query(line)
    result = answer_kind(parsed, currency)
    assert isinstance(result, PurchaseAnswer), result
    lang = "zh" if currency == "CNY" else "en"
    return result, render("purchase", lang, plain=True, result=result, parsed=parsed)


def test_buying_a_4090_in_yuan_prices_and_names_the_4090_d() -> None:
    """Before: "买一张4090还是租" priced the export-controlled 4090 at ¥14,599 (street) and
    said in its last line that it cannot be bought new in China."""
    result, zh = _purchase("买一张4090还是租", "CNY")
    assert result.plan is not None and result.plan.lines[0].gpu_id == "rtx-4090d"
    assert result.plan.lines[0].unit_price == 12999 and result.sold_as == "GeForce RTX 4090"
    assert "GeForce RTX 4090 受美国出口管制，国内买不到全新的" in zh and "4090 D" in zh, zh
    result, en = _purchase("buy a 4090 or rent", "USD")
    assert result.plan is not None and result.plan.lines[0].gpu_id == "rtx-4090"
    assert result.sold_as is None and "4090 D" not in en


@pytest.mark.parametrize(
    ("lang", "said"),
    [("zh", "买约 ¥12,999/张（国内卖的是 GeForce RTX 4090 D (China)）"), ("en", "(in China: the")],
)
def test_a_card_compare_in_yuan_buys_the_4090_d(lang: str, said: str) -> None:
    parsed = parse_query("跑70b量化 买4090还是a6000")
    answer = answer_kind(parsed, "CNY")
    assert isinstance(answer, CompareAnswer)
    four = next(s for s in answer.sides if s.gpu_id == "rtx-4090")
    assert four.buy_price == 12999 and four.buy_as == "GeForce RTX 4090 D (China)"
    assert said in render("compare", lang, plain=True, result=answer, parsed=parsed)


def test_only_a_china_sku_of_the_same_memory_stands_in() -> None:
    """The 5090 D V2 is a 24 GB card: the 32 GB 5090 keeps its price, said hard to buy."""
    assert china_sku_for("rtx-4090") is not None
    assert china_sku_for("rtx-5090") is None and china_sku_for("rtx-a6000") is None
    five = buy_price("rtx-5090", "CNY")
    assert five.sold_as is None and five.restricted and five.price
    assert not buy_price("rtx-5090", "USD").restricted
    assert not buy_price("rtx-a6000", "CNY").restricted
