"""A purchase for a full fine-tune that no plan within the budget holds on AdamW is planned
with the change the fit answer names first for it, an 8-bit optimizer (still every
parameter), said in the heading, not "does not fit within this budget"; a plan that runs it
as asked a little over the budget is named beside it."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.kinds import answer_kind
from advisor.kinds.purchase import PurchaseAnswer
from advisor.kinds.purchase_fit import fits
from advisor.models.choices import Optimizer
from advisor.parse import parse_query
from advisor.render import render


def _answer(line: str, currency: str = "CNY") -> tuple[PurchaseAnswer, str]:
    parsed = parse_query(line)
    assert parsed.question_kind == "purchase", parsed
    result = answer_kind(parsed, currency)
    assert isinstance(result, PurchaseAnswer)
    lang = "zh" if currency == "CNY" else "en"
    text = render("purchase", lang, plain=True, result=result, parsed=parsed, unknown_card=None)
    return result, text


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("预算20万 7b到14b全参微调买什么卡", "用 8-bit 优化器"),
        (
            "budget ¥200000 for full fine-tuning of 7b to 14b, which cards",
            "with an 8-bit optimizer",
        ),
    ],
)
def test_a_full_fine_tune_over_every_plan_on_adamw_is_planned_with_an_8bit_optimizer(
    line: str, said: str
) -> None:
    """Before: "⚠️ 14B does not fit within this budget" under 2x RTX PRO 6000 (¥133,624).
    14B on AdamW under FSDP needs 87 GiB a card on three of them (76 GiB with the guide's
    headroom) and the three cost ¥212,436 in a workstation; on paged AdamW 8-bit two need
    77 GiB, with a chunked cross-entropy as well 75 GiB: two hold it, 21% free."""
    result, text = _answer(line, "CNY" if "预算" in line else "USD")
    plan = result.plan
    assert plan is not None and result.optimizer_8bit and plan.fits_workload, text
    assert plan.total <= 200_000 and plan.vram_gb >= 2 * 96, text
    assert said in text and "放不下，这是显存最多" not in text and "does not fit within" not in text
    gpu = catalog.gpus()[plan.lines[0].gpu_id]
    w = parse_query(line).workload
    assert w is not None and not fits(w, gpu, plan.lines[0].count)
    light = w.model_copy(update={"optimizer": Optimizer.paged_adamw_8bit})
    assert fits(
        light.model_copy(update={"chunked_loss": result.chunked_loss}), gpu, plan.lines[0].count
    )


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        ("预算23万 14b全参微调买什么卡", "zh", "按原样（标准 AdamW）最省的方案：4×"),
        ("budget ¥230000 for full fine-tuning of a 14b", "en", "As asked (standard AdamW)"),
    ],
)
def test_the_plan_as_asked_a_little_over_the_budget_is_named_beside_it(
    line: str, lang: str, said: str
) -> None:
    result, text = _answer(line, "CNY" if lang == "zh" else "USD")
    assert result.optimizer_8bit and result.as_asked is not None
    assert 230_000 < result.as_asked.total <= 230_000 * 1.25
    assert said in text and ("超出预算 19%" in text or "19% over the budget" in text), text


def test_lora_and_a_plan_that_fits_as_asked_are_unchanged() -> None:
    result, _ = _answer("预算20万 14b lora微调买什么卡")
    assert not result.optimizer_8bit and result.as_asked is None
    result, _ = _answer("预算40万 14b全参微调买什么卡")
    assert not result.optimizer_8bit and result.plan is not None and result.plan.fits_workload
