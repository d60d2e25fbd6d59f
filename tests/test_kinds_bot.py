"""Each kind of question with its own answer, end to end through the bot: private chats in
both languages, a group (/vram@Bot and a reply), inline mode; bad budgets and unknown cards
answered clearly; every first reply at most 900 visible characters."""

from __future__ import annotations

import pytest

from standin import Chat, FakeTelegram, User
from tests.conftest import press, say, shown
from tests.test_inline import _inline

LAB = Chat(-100777321, "supergroup", "GPU lab")
FIRST_REPLY_LIMIT = 900  # visible characters (the bar for a first reply)

ZH = User(7101, "王", "zh-hans")
EN = User(7102, "Bo", "en")


@pytest.mark.parametrize(
    ("user", "line", "expected"),
    [
        # capability: the card's table with the chat (GGUF) and image routes
        (EN, "what can my 3080 run", ["What fits on GeForce RTX 3080", "GGUF Q4_K_M", "Images"]),
        (ZH, "我的 4060ti 16g 能跑什么模型", ["能跑什么", "GGUF Q4_K_M", "画图"]),
        (ZH, "能微调多大的模型", ["哪张卡"]),
        # purchase: a plan within the budget, the box, break-even
        (ZH, "预算8万配一台深度学习服务器", ["预算 ¥80,000", "合计", "电源 ≥", "回本"]),
        (EN, "budget $12k build a workstation for llama 70b", ["A plan for $12,000", "Total"]),
        # a budget in 万: new cards with an invoice first, unless no new plan runs the job
        (ZH, "预算2万 买卡 微调 qwen2.5-7b", ["二手", "只买全新", "排序"]),
        (EN, "which gpu should i buy", ["What's the budget?"]),
        # A vs B: side by side, with and without a workload
        (ZH, "4090还是3090", ["对比", "能跑：", "二手"]),
        (EN, "A6000 vs 2x 3090 for qwen2.5-14b", ["2× GeForce RTX 3090 vs RTX A6000", "Fits"]),
        # small talk: one short reply with three examples
        (ZH, "你好", ["你好！", "可以这样问"]),
        (EN, "what is the capital of france", ["outside what I answer", "Try:"]),
    ],
)
async def test_each_kind_gets_its_own_answer_in_a_private_chat(
    tg: FakeTelegram, bot, user: User, line: str, expected: list[str]
) -> None:
    text = shown(await say(tg, user, line))
    for part in expected:
        assert part in text, (line, text)
    assert len(text) <= FIRST_REPLY_LIMIT, (line, len(text))
    assert not [c for c in tg.calls if c.error]


@pytest.mark.parametrize(
    ("user", "line", "expected"),
    [
        (ZH, "预算0元 买显卡", "预算要大于 0"),
        (EN, "budget -5000 buy gpu", "above zero"),
        (ZH, "买卡 预算 1000000000000元", "集群"),
        (EN, "buy a gpu, budget 1000000000000 usd", "cluster"),
        (ZH, "预算 5000 欧元 买卡", "EUR"),
        (EN, "budget 5000 euros buy a server", "no prices in EUR"),
        (EN, "buy a gpu for 300 dollars", "not enough"),
        (ZH, "昇腾 310p 能跑什么模型", "我不认识「昇腾 310p」"),
        (EN, "arc b580 12g what can it run", "I don't know “arc b580”"),
        # each bad budget in the other language too
        (EN, "budget 0 build a server", "above zero"),
        (ZH, "预算-3万 买卡", "预算要大于 0"),
        # a currency without prices: "5000 卢布" was read as ¥5,000 and planned
        (ZH, "预算 5000 卢布 买显卡", "预算的币种 RUB 我没有报价"),
        (EN, "budget 5000 rubles buy a gpu", "no prices in RUB"),
        # 10,000 users: "10,000" was read as 0 users and refused
        (EN, "serve llama3-8b to 10,000 users", "for 10000 people"),
        (ZH, "10000人同时用 qwen2.5-7b", "服务 10000 人"),
        # a card no one sells: named, not replaced
        (ZH, "RTX 6090 能跑什么", "我不认识「rtx 6090」"),
        (EN, "can an rtx 6090 run qwen2.5-7b", "I don't know the card “rtx 6090”"),
        (EN, "buy an rtx 6090 for qwen2.5-14b, budget $3000", "I don't know the card “rtx 6090”"),
    ],
)
async def test_bad_budgets_and_unknown_cards_get_a_clear_answer(
    tg: FakeTelegram, bot, user: User, line: str, expected: str
) -> None:
    text = shown(await say(tg, user, line))
    assert expected in text, (line, text)
    assert "Traceback" not in text and len(text) <= FIRST_REPLY_LIMIT


async def test_kinds_are_answered_in_a_group_by_command_and_by_reply(tg: FakeTelegram, bot) -> None:
    asked = await say(tg, ZH, "/vram@GpuAdvisorBot 预算8万配一台深度学习服务器", LAB)
    assert "预算 ¥80,000" in shown(asked)
    assert asked.params["chat_id"] == LAB.id
    # another member replies to the bot's message with a capability question
    reply = await say(
        tg,
        User(7103, "Li", "en"),
        "what can my 3090 run",
        LAB,
        reply_to=asked.result,
    )
    assert "What fits on GeForce RTX 3090" in shown(reply)


async def test_kinds_are_answered_inline(tg: FakeTelegram, bot) -> None:
    purchase = await _inline(tg, EN, "budget $12k build a workstation for llama 70b")
    [result] = purchase.params["results"]
    assert "A plan for $12,000" in result["input_message_content"]["message_text"]
    capability = await _inline(tg, ZH, "3090 最大能跑多大的模型")
    [result] = capability.params["results"]
    assert "能跑什么" in result["input_message_content"]["message_text"]


def test_a_card_named_without_a_count_beside_a_counted_one_is_one_card() -> None:
    """ "A6000 vs 2× 3090": the A6000 is one card (48 GB against 2 × 24 GB), not two."""
    from advisor.kinds import answer_kind
    from advisor.parse import parse_query

    sides = answer_kind(parse_query("A6000 vs 2x 3090 跑 qwen2.5-14b"), "CNY").sides
    assert [(s.gpu_id, s.count) for s in sides] == [("rtx-3090", 2), ("rtx-a6000", 1)]
    assert all(s.verdict == "fits" for s in sides)
    # the bigger single card holds the whole model: more memory used per card
    assert sides[1].per_card_bytes > sides[0].per_card_bytes


async def test_the_guided_conversation_has_a_buy_a_machine_path(tg: FakeTelegram, bot) -> None:
    """/start → Buy a machine → a model → a purchase budget: the purchase plan."""
    user = User(7104, "Ann", "en")
    menu = await say(tg, user, "/start")
    step = await press(tg, user, menu, "Buy a machine")
    step = await press(tg, user, step, "Qwen2.5-7B")
    assert "Purchase budget" in shown(step)
    answer = await press(tg, user, step, "$3k")
    text = shown(answer)
    assert "A plan for $3,000 to run Qwen2.5 7B" in text and "Total" in text
    assert len(text) <= FIRST_REPLY_LIMIT
    zh = User(7105, "王", "zh-hans")
    step = await press(tg, zh, await say(tg, zh, "/start"), "买机器")
    step = await press(tg, zh, step, "Qwen2.5-72B")
    answer = await press(tg, zh, step, "¥8万")
    assert "预算 ¥80,000 的采购方案（跑 Qwen2.5 72B" in shown(answer)


def test_a_card_named_to_buy_is_priced_with_a_year_of_renting_beside_it() -> None:
    """ "买一台4090还是租卡划算？用一年": the 4090 asked about, not "what's the budget?"."""
    from advisor.kinds import answer_kind
    from advisor.parse import parse_query

    a = answer_kind(parse_query("买一台4090还是租卡划算？用一年"), "CNY")
    assert a.named_cards and a.problem is None
    # in yuan, the 4090 D sold in China in place of the export-controlled 4090
    assert [(ln.gpu_id, ln.count) for ln in a.plan.lines] == [("rtx-4090d", 1)]
    assert a.plan.total == 12999 + 12000  # the card and a desktop around it
    assert a.plan.rent_per_year is not None and a.plan.rent_per_year < a.plan.total
    assert a.plan.break_even_months > 12  # so a year of renting is cheaper: both are shown
    # a lab's budget with a card-buying word buys a machine, not cards for a PC it lacks
    lab = answer_kind(parse_query("实验室有10万预算，想买卡做大模型微调，买什么"), "CNY")
    assert lab.plan.box_kind != "own_pc" and lab.plan.total <= 100_000


def test_two_models_are_compared_on_the_same_job() -> None:
    """ "qwen vs llama 14b": Qwen at the size named beside Llama, each side judged; with a
    card named, both on that card."""
    from advisor.kinds import answer_kind, answered_as
    from advisor.parse import parse_query

    p = parse_query("qwen vs llama 14b")
    assert p.question_kind == "compare" and answered_as(p) == "compare"
    a = answer_kind(p, "USD")
    assert a.models and [s.model_name for s in a.sides] == ["14B", "Qwen2.5 14B"]
    on_card = answer_kind(parse_query("qwen2.5-14b 和 glm-4-9b 哪个好 3090"), "CNY")
    assert [(s.model_name, s.gpu_id) for s in on_card.sides] == [
        ("Qwen2.5 14B", "rtx-3090"),
        ("GLM-4 9B", "rtx-3090"),
    ]
    # the bigger model needs more memory on the same card, and says so in its verdict
    assert on_card.sides[0].per_card_bytes > on_card.sides[1].per_card_bytes
    assert on_card.sides[0].verdict == "no_fit" and on_card.sides[1].verdict != "no_fit"


async def test_the_buy_a_machine_path_takes_a_typed_budget_or_none(tg: FakeTelegram, bot) -> None:
    """The budget typed at its step ("5万") is read as a purchase budget; skipping it gives
    the cheapest plan that runs the model. Both are the purchase answer, not a rental pick."""
    zh = User(7106, "李", "zh-hans")
    step = await press(tg, zh, await say(tg, zh, "/start"), "买机器")
    step = await press(tg, zh, step, "Qwen2.5-32B")
    typed = shown(await say(tg, zh, "5万"))
    assert "预算 ¥50,000 的采购方案（跑 Qwen2.5 32B" in typed and "合计" in typed
    assert len(typed) <= FIRST_REPLY_LIMIT
    en = User(7107, "Ann", "en")
    step = await press(tg, en, await say(tg, en, "/start"), "Buy a machine")
    step = await press(tg, en, step, "Llama-3.3-70B")
    skipped = shown(await press(tg, en, step, "Skip"))
    assert "The cheapest plan to run Llama 3.3 70B" in skipped and "Cards:" in skipped
    assert "/h" not in skipped.split("Buy or rent")[0]  # priced to buy, not a rental pick


def test_two_cards_that_cannot_hold_the_model_alone_are_compared_at_the_fewest_that_do() -> None:
    """ "a100 和 h100 跑 llama 3.1 70b 推理哪个快" answered "neither fits as asked" (one card of
    each): with no count named, each card is compared at the fewest of it that run the job;
    a card that holds it alone stays one card (MI300X beside H100s)."""
    from advisor.kinds import answer_kind
    from advisor.parse import parse_query

    a = answer_kind(parse_query("a100 和 h100 跑 llama 3.1 70b 推理哪个快"), "CNY")
    assert all(s.verdict != "no_fit" and s.count > 1 for s in a.sides)
    assert a.verdict is not None and a.verdict.basis != "none_fits"
    b = answer_kind(parse_query("MI300X vs H100 for llama 3.1 70b inference"), "USD")
    assert [(s.gpu_id, s.count > 1) for s in b.sides] == [("mi300x", False), ("h100-sxm", True)]
    # counts the user named are kept
    c = answer_kind(parse_query("A6000 vs 2x 3090 跑 qwen2.5-14b"), "CNY")
    assert [(s.gpu_id, s.count) for s in c.sides] == [("rtx-3090", 2), ("rtx-a6000", 1)]
