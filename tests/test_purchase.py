"""Purchase answers an expert signs: the card a plan names is the card whose price it uses
(the China-market RTX 5090 D V2 at ¥16,499, not the 32 GB 5090), each price says whether it
is a launch, street or used-market figure, a used-card plan says it cannot go through an
institution's purchasing and puts the new-only plan beside it, and buy-vs-rent ends in a
verdict against the cards' depreciation period with its assumptions stated."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.kinds import answer_kind
from advisor.kinds.purchase import PurchaseAnswer, card_prices
from advisor.kinds.purchase_costs import buy_or_rent as _buy_or_rent
from advisor.parse import parse_query
from advisor.render import render


def _answer(line: str, currency: str) -> PurchaseAnswer:
    parsed = parse_query(line)
    assert parsed.question_kind == "purchase", (line, parsed.understood, parsed.ignored)
    result = answer_kind(parsed, currency)
    assert isinstance(result, PurchaseAnswer)
    return result


def _text(line: str, lang: str) -> str:
    parsed = parse_query(line)
    result = answer_kind(parsed, "CNY" if lang == "zh" else "USD")
    return render("purchase", lang, plain=True, result=result, parsed=parsed, unknown_card=None)


def test_the_china_price_of_the_5090_belongs_to_the_24gb_5090_d_v2_not_the_5090() -> None:
    """ "预算5万 一台训练服务器" offered "2× GeForce RTX 5090, ¥44,998": the 5090 D's ¥16,499
    under the 32 GB card's name. The new-only plan is now the 5090 D V2 (24 GB) it prices."""
    a = _answer("预算5万 一台训练服务器", "CNY")
    # a budget in 万 is an institution's: the new plan leads (the used one after it)
    assert a.invoice_first and a.plan is not None
    [line] = a.plan.lines
    assert (line.gpu_id, line.count, line.unit_price) == ("rtx-5090d-v2", 2, 16499)
    assert line.price_basis == "launch"
    assert catalog.gpus()["rtx-5090d-v2"].vram_gb == 24
    # no yuan price in the catalog is filed under the global 5090
    [global_5090] = [e for e in card_prices() if e.gpu_id == "rtx-5090"]
    assert global_5090.cny is None and global_5090.export_controlled
    zh = _text("预算5万 一台训练服务器", "zh")
    assert "RTX 5090 D V2 (China, 24 GB)（全新，首发价 ¥16,499/张）" in zh
    assert "2× GeForce RTX 5090，" not in zh


def test_every_price_is_dated_sourced_and_says_what_kind_of_price_it_is() -> None:
    for entry in card_prices():
        assert entry.source and entry.read_date, entry.gpu_id
        assert entry.basis in ("launch", "street", "used", "list"), entry.gpu_id
        assert entry.usd is not None or entry.cny is not None, entry.gpu_id
        assert entry.gpu_id in catalog.gpus(), entry.gpu_id
        if entry.china_sku_of:
            assert entry.china_sku and entry.china_sku_of in catalog.gpus()


def test_a_street_price_is_shown_with_the_launch_price_beside_it() -> None:
    a = _answer("buy 2x rtx 5090, budget $10k", "USD")
    [line] = a.plan.lines
    assert line.gpu_id == "rtx-5090" and line.price_basis == "street"
    assert (line.unit_price, line.launch_price) == (3059, 1999)
    en = _text("buy 2x rtx 5090, budget $10k", "en")
    assert "street price $3,059 each, launch $1,999" in en


def test_in_china_an_export_controlled_card_is_named_with_the_china_version() -> None:
    zh = _text("买2张5090 预算6万", "zh")
    assert "该卡受美国出口管制" in zh and "国内版是 GeForce RTX 5090 D V2" in zh
    # an automatic plan in yuan takes the card sold in China before a controlled one
    a = _answer("预算10万 买卡 微调 qwen2.5-7b", "CNY")
    for plan in (a.plan, a.used_plan or a.alternative):
        assert plan is not None
        assert not any(
            e.export_controlled for e in card_prices() if e.gpu_id == plan.lines[0].gpu_id
        )


@pytest.mark.parametrize(
    ("line", "lang", "words"),
    [
        # a budget in 万 or a lab named ranks new cards first (the test below)
        ("预算50000元 一台训练服务器", "zh", ["二手卡一般开不出正规发票", "固定资产", "只买全新"]),
        ("budget $5k build a deep learning box", "en", ["without the invoice", "new cards only"]),
    ],
)
def test_a_used_card_plan_says_it_cannot_be_procured_and_gives_the_new_plan(
    line: str, lang: str, words: list[str]
) -> None:
    a = _answer(line, "CNY" if lang == "zh" else "USD")
    assert a.used_cards and "used_no_invoice" in a.notes()
    assert a.alternative is not None
    assert all(ln.condition == "new" for ln in a.alternative.lines)
    assert a.alternative.total <= a.budget_amount
    text = _text(line, lang)
    for word in words:
        assert word in text, (word, text)
    # the procurement note comes with the new plan, before the buy-or-rent figures
    assert (
        text.index(words[0])
        < text.index(words[-1])
        < text.index("回本" if lang == "zh" else "pays off")
    )


def test_buy_or_rent_ends_in_a_verdict_with_its_assumptions() -> None:
    """ "10万 买卡还是租卡 7B微调" gave "约 44.2 个月回本" and no verdict."""
    a = _answer("10万 买卡还是租卡 7B微调", "CNY")
    p = a.plan
    assert p.break_even_months > a.horizon_months == 36
    assert p.verdict == "rent"
    # the hours a day that would pay off within the horizon, from the same formula
    assert p.hours_per_day_horizon == pytest.approx(
        24 * a.utilization * p.break_even_months / a.horizon_months, rel=0.01
    )
    zh = _text("10万 买卡还是租卡 7B微调", "zh")
    assert "结论：租更划算" in zh and f"每天用满 {p.hours_per_day_horizon} 小时以上" in zh
    assert "每天用 8.4 小时" in zh and "电费 ¥0.6/度" in zh and "不计转卖残值" in zh
    en = _text("10万 买卡还是租卡 7B微调", "en")
    assert "Verdict: rent" in en and "no resale" in en


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("买4090还是租划算？每天大概用8小时", "zh"),
        ("4090 买还是租 每天跑6小时", "zh"),
        ("buy a 4090 or rent? about 8 hours a day", "en"),
    ],
)
def test_buy_or_rent_counts_a_new_geforce_cards_resale(line: str, lang: str) -> None:
    """ "买4090还是租 每天8小时" said "不计转卖残值": the break-even now takes off the cards'
    resale after the 3-year horizon, the lowest used ÷ launch share read at that age
    (purchase_prices.toml [[resale]]: a 3090 at $800 of $1,499 after 5.4 years, 53%)."""
    currency = "CNY" if lang == "zh" else "USD"
    a = _answer(line, currency)
    p = a.plan
    # in yuan the 4090 D sold in China in place of the export-controlled 4090
    sold = "rtx-4090d" if currency == "CNY" else "rtx-4090"
    assert p.lines[0].gpu_id == sold and p.lines[0].condition == "new"
    assert p.resale_share == pytest.approx(800 / 1499, abs=0.01)
    assert p.resale_value == pytest.approx(
        (p.lines[0].launch_price or p.lines[0].unit_price) * p.lines[0].count * p.resale_share,
        abs=1,
    )
    unsold = _buy_or_rent(p.total, p.rent_per_hour, p.wall_watts, currency, a.utilization)
    assert p.break_even_months < unsold["break_even_months"]
    assert p.break_even_months == pytest.approx(
        unsold["break_even_months"] * (p.total - p.resale_value) / p.total, abs=0.1
    )
    data = a.public_json()["purchase"]
    assert data["resale_counted"] is True and data["resale_value"] == p.resale_value
    text = _text(line, lang)
    if lang == "zh":
        assert "3 年后约 53% 残值" in text and "不计转卖残值" not in text
    else:
        assert "resold after 3 years at ~53%" in text and "no resale" not in text


@pytest.mark.parametrize(
    ("total", "rent_per_hour", "verdict"),
    [
        # months = total / (730 h × 35% × (rent − 0.25 kW × ¥0.6))
        (2_000, 1.5, "buy"),  # 5.8 months
        (8_000, 1.5, "close"),  # 23.2 months: within 3 years, after 18 months
        (20_000, 1.5, "rent"),  # 58 months
    ],
)
def test_the_verdict_follows_the_break_even_against_18_and_36_months(
    total: float, rent_per_hour: float, verdict: str
) -> None:
    out = _buy_or_rent(total, rent_per_hour, 250, "CNY")
    months = total / (730 * 0.35 * (rent_per_hour - 0.25 * 0.6))
    assert out["break_even_months"] == pytest.approx(months, abs=0.05)
    assert out["verdict"] == verdict
    # electricity above the rent: never pays off, no verdict
    assert _buy_or_rent(total, 0.1, 250, "CNY")["verdict"] is None


@pytest.mark.parametrize(
    ("line", "currency"),
    [
        (line, cur)
        for cur, lines in {
            "CNY": [
                "预算3000买显卡",
                "预算1.5万买显卡",
                "预算2万 买卡 微调 qwen2.5-7b",
                "预算5万 一台训练服务器",
                "10万 买卡还是租卡 7B微调",
                "预算8万配一台跑 qwen2.5-72b 的服务器",
                "预算50万配服务器",
            ],
            "USD": [
                "budget $5k build a deep learning box",
                "budget $12k build a workstation for llama 70b",
                "$2000 which gpu to buy for sdxl",
                "budget $60k server",
            ],
        }.items()
        for line in lines
    ],
)
def test_total_and_the_new_only_total_never_exceed_the_budget(line: str, currency: str) -> None:
    a = _answer(line, currency)
    assert a.plan is not None and a.plan.total <= a.budget_amount
    if a.alternative is not None:
        assert a.alternative.total <= a.budget_amount
    # one answer, one story: a verdict only with a break-even, in agreement with it
    p = a.plan
    if p.verdict == "rent":
        assert p.break_even_months > a.horizon_months
    elif p.verdict == "buy":
        assert p.break_even_months <= a.buy_below_months


def test_the_5090_d_v2_is_read_as_its_own_card() -> None:
    for line in ("5090D v2 能跑什么", "5090 D V2 能跑什么", "5090d-v2 what can it run"):
        p = parse_query(line)
        assert p.gpu_id == "rtx-5090d-v2" and not p.ignored, (line, p.ignored)
    assert parse_query("5090d 能跑什么").gpu_id == "rtx-5090d"
    # a "v2" after another card is not a card word
    assert parse_query("3090 v2 跑 qwen2.5-7b").gpu_id == "rtx-3090"


@pytest.mark.parametrize(
    ("line", "bought", "rented"),
    [
        ("should I buy 2x 4090 or rent an A100 for a year", ("rtx-4090", 2), "A100 80GB PCIe"),
        ("租A100还是买两张4090", ("rtx-4090", 2), "A100 80GB PCIe"),
        ("rent an a100 or buy a 4090", ("rtx-4090", 1), "A100 80GB PCIe"),
    ],
)
def test_buy_these_or_rent_that_prices_the_bought_cards_against_the_rented_one(
    line: str, bought: tuple[str, int], rented: str
) -> None:
    """Was: "What's the budget?" (two cards named, so no card was taken as the one to buy).
    The cards with a count, or the ones named with the buying word, are bought; the break-even
    is against renting the card the line names to rent."""
    a = _answer(line, "USD")
    assert a.problem is None and a.named_cards and a.plan is not None
    assert [(ln.gpu_id, ln.count) for ln in a.plan.lines] == [bought]
    assert a.plan.rent_name == f"1× {rented}"
    assert a.plan.rent_per_hour is not None and a.plan.break_even_months is not None
    assert f"renting 1× {rented} instead costs" in _text(line, "en")
    assert f"改租 1× {rented} 约" in _text(line, "zh")


def test_a_model_that_needs_a_fraction_of_the_budget_gets_what_the_budget_buys_beside_it() -> None:
    """ "$8000 workstation for stable diffusion and LLMs" was one RTX 3060 ($1,829 in all)
    and nothing else: the cheapest plan that runs SD stays, and what the $8,000 buys (the
    most memory, as with no model named) is shown beside it, within the budget."""
    a = _answer("$8000 workstation for stable diffusion and LLMs", "USD")
    assert a.plan is not None and a.plan.total < 8000 / 2
    assert a.roomier is not None and a.plan.total < a.roomier.total <= 8000
    assert a.roomier.vram_gb > a.plan.vram_gb
    assert "The budget buys more:" in _text("$8000 workstation for stable diffusion and LLMs", "en")
    assert "预算还能买更大的" in _text("$8000 workstation for stable diffusion and LLMs", "zh")
    # a plan that spends most of the budget gets no second plan
    assert _answer("实验室预算8万，买什么显卡跑qwen2.5-32b", "CNY").roomier is None


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_card_no_one_sells_is_named_not_silently_replaced_by_the_plan(lang: str) -> None:
    line = "buy an rtx 6090 for qwen2.5-14b, budget 20000 yuan"
    parsed = parse_query(line)
    assert parsed.unknown_card == "rtx 6090"
    result = answer_kind(parsed, "CNY")
    text = render(
        "purchase", lang, plain=True, result=result, parsed=parsed, unknown_card="rtx 6090"
    )
    said = "我不认识「rtx 6090」" if lang == "zh" else "I don't know the card “rtx 6090”"
    assert text.startswith("⚠️ " + said)


def test_an_h100_to_buy_is_priced_as_the_pcie_card_and_says_so() -> None:
    """ "buy an H100 or rent one" read the H100 SXM5 (no purchase price: it is sold inside
    8-GPU HGX servers) and asked for a budget. A single H100 bought is the PCIe card."""
    line = "is it cheaper to buy an H100 or rent one for 12 months"
    a = _answer(line, "USD")
    assert a.problem is None and a.plan is not None
    assert [(ln.gpu_id, ln.count) for ln in a.plan.lines] == [("h100-pcie", 1)]
    assert a.unpriced == "H100 SXM5 80GB"
    en = _text(line, "en")
    assert "(no purchase price for the H100 SXM5 80GB: priced as its single-card form)" in en
    assert "1× H100 PCIe 80GB" in en
    assert "（没有 H100 SXM5 80GB 的购买价，按它的单卡版计价）" in _text(line, "zh")
    # a card without a price in any form is said so, and the plan asks for a budget
    b = _answer("买一张A100 80G还是租", "CNY")
    assert b.unpriced == "A100 80GB SXM4" and b.problem == "no_budget"


def test_a_budget_one_box_can_spend_is_not_called_a_cluster() -> None:
    """ "budget $40k workstation for sdxl": SDXL's cheapest plan is $2,300, but the budget buys
    four cards in one box ($38,760): no "plan a cluster" note (it was judged on the $2,300)."""
    a = _answer("budget $40k workstation for sdxl", "USD")
    assert a.roomier is not None and a.roomier.total <= 40_000 and not a.capped
    assert "cluster" not in _text("budget $40k workstation for sdxl", "en")
    assert _answer("buy a gpu, budget 1000000000000 usd", "USD").capped


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_lab_budget_ranks_new_cards_with_an_invoice_before_used_ones(lang: str) -> None:
    """ "预算8万 32b推理+7b lora" led with 4× used RTX 3090 at a converted used-market price,
    beside a note that a university cannot invoice used cards. A budget in 万 (or a lab,
    school or research group named) is an institution's purchase: the new plan leads, the
    used one follows, labelled, and the answer says which ranking it used."""
    line = "预算8万 32b推理+7b lora"
    a = _answer(line, "CNY" if lang == "zh" else "USD")
    assert a.invoice_first and a.plan is not None and a.used_plan is not None
    assert all(ln.condition == "new" for ln in a.plan.lines)
    assert any(ln.condition == "used" for ln in a.used_plan.lines)
    assert a.alternative is None and not a.used_cards
    assert a.public_json()["purchase"]["ranking"] == "new_with_invoice_first"
    text = _text(line, lang)
    first_card = text.split("\n")[1]
    assert "used" not in first_card and "二手" not in first_card
    if lang == "zh":
        assert "二手方案" in text and "• 排序：" in text and "发票" in text
    else:
        assert "Used cards (cheaper, but no proper invoice" in text and "• Ranking:" in text


def test_a_budget_written_without_an_institution_keeps_the_cheapest_plan_first() -> None:
    """ "$12k workstation": no lab, school or 万: the used plan may lead, with its note."""
    a = _answer("budget $12k workstation for llama 70b", "USD")
    assert not a.invoice_first and a.used_plan is None
    assert a.public_json()["purchase"]["ranking"] == "cheapest_first"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_converted_launch_price_says_no_china_street_price_was_read(lang: str) -> None:
    # the RTX A6000's only price is NVIDIA's $4,650 list price: in yuan it is converted, and
    # a lab buying with an invoice is told to ask JD / a reseller for the price it will pay
    line = "预算5万 组里主要跑wan2.1 14b 视频生成和flux lora训练 买啥卡"
    a = _answer(line, "CNY")
    assert a.plan is not None and a.plan.lines[0].gpu_id == "rtx-a6000"
    assert a.plan.lines[0].price_converted
    said = {"zh": "没有读到国内的实际售价", "en": "no China street price read"}[lang]
    asks = {"zh": "京东、经销商的含税价可能不同", "en": "VAT invoice at JD or a reseller"}[lang]
    text = _text(line, lang)
    assert said in text and asks in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_alternative_plan_says_what_it_trades(lang: str) -> None:
    # the used 3090 beside a new 4090 D: the same 24 GB, about half the 16-bit throughput
    line = "预算8万 实验室 跑flux lora 训练 买啥卡"
    a = _answer(line, "CNY")
    trade = a.trade(a.used_plan)
    assert trade is not None and trade["gb"] == trade["plan_gb"] == 24
    assert 0.4 < trade["compute"] < 0.6
    said = {"zh": "16 位张量算力合计约为方案的 0.5 倍", "en": "about 0.5× the plan's 16-bit"}[lang]
    assert said in _text(line, lang)
