"""A purchase for a diffusion job sizes it as the fit answer does on the same card: FLUX.1-dev
LoRA with no knobs named runs with an fp8 base (data/small_card_recipes.toml base_fp8) on
one 24 GB card, said so; the 66 GiB of a bf16 base read "does not fit within this budget"
under 2 used 3090s, while the fit answer gave 15.3 GiB for a 16 GB card."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.kinds import answer_kind
from advisor.kinds.purchase_fit import fit_recipe
from advisor.parse import parse_query
from advisor.render import render

LINES = [
    ("预算3万 想买卡做sdxl/flux lora训练和出图 买啥", "zh", "冻结的底座以 fp8 存放"),
    ("budget $5000, buy a gpu for flux lora training", "en", "frozen base stored in fp8"),
]


@pytest.mark.parametrize(("line", "lang", "said"), LINES)
def test_flux_lora_purchase_is_one_card_with_the_fit_answers_recipe(
    line: str, lang: str, said: str
) -> None:
    parsed = parse_query(line)
    result = answer_kind(parsed, "CNY" if lang == "zh" else "USD")
    text = render("purchase", lang, plain=True, result=result, parsed=parsed)
    plan = result.plan
    assert plan is not None and plan.fits_workload and plan.recipe == "base_fp8", text
    assert sum(ln.count for ln in plan.lines) == 1, text
    assert said in text and "⚠️" not in text.split("\n\n")[0], text


def test_a_diffusion_job_fits_several_cards_as_it_fits_one() -> None:
    parsed = parse_query("kohya 训练 flux lora")
    assert parsed.workload is not None
    gpu = catalog.gpus()["rtx-3090"]
    assert fit_recipe(parsed.workload, gpu, 2) == fit_recipe(parsed.workload, gpu, 1)


# A video model too big for a 48 GB card at 16 bits is planned with fp8 weights and text
# encoders, the fit answer's first format change, before 4-bit (before: "✅ fits with 4-bit
# weights (16-bit does not fit)" for Wan2.1-14B on an RTX A6000)
WAN = [
    (
        "预算5万 组里主要跑wan2.1 14b 视频生成和flux lora训练 买啥卡",
        "zh",
        "按 fp8 权重和文本编码器装得下",
    ),
    (
        "budget 50k CNY, group mainly runs wan2.1 14b video generation and flux lora training",
        "en",
        "fits with fp8 weights and text encoders",
    ),
]


@pytest.mark.parametrize(("line", "lang", "said"), WAN)
def test_a_video_job_too_big_at_16_bits_is_planned_in_fp8_before_4_bit(
    line: str, lang: str, said: str
) -> None:
    parsed = parse_query(line)
    result = answer_kind(parsed, "CNY")
    text = render("purchase", lang, plain=True, result=result, parsed=parsed)
    wan = next(i for i, job in enumerate(result.jobs) if job[0].startswith("Wan"))
    fit, _recipe, form = result.job_fits[wan]
    assert fit and form == "fp8_weights", text
    assert said in text, text
    assert "4-bit 权重装得下" not in text and "fits with 4-bit" not in text, text
