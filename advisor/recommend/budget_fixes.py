"""When no card meets the budget as asked: the cheap changes (an fp8 KV cache, half the
context, a smaller number format, LoRA / QLoRA) searched again on cards within it."""

from __future__ import annotations

from pathlib import Path

from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.answer import Search, fixed_answer, search_cards
from advisor.recommend.fix_candidates import candidate_fixes
from advisor.recommend.options import Recommendation
from advisor.recommend.pricing import card_prices
from advisor.recommend.rank import (
    cheapest_of,
)
from advisor.recommend.search import Setups, may_meet_budget

BUDGET_FIX_KINDS = ("kv_fp8", "shorter_context", "quantize", "lora", "qlora")
BUDGET_FIX_TRIALS = 5


def budget_fixes(result: EstimateResult) -> list[tuple[str, Workload]]:
    """The cheap changes worth a second search when nothing fits the budget, cheapest first:
    an fp8 KV cache, half the context, a smaller number format, LoRA / QLoRA."""
    out: list[tuple[str, Workload]] = []
    kinds: set[str] = set()
    for code, make in candidate_fixes(result):
        kind = code.partition(":")[0]
        if kind not in BUDGET_FIX_KINDS or (kind == "shorter_context" and kind in kinds):
            continue
        kinds.add(kind)
        out.append((code, make()))
        if len(out) >= BUDGET_FIX_TRIALS:
            break
    return out


def answer_with_budget_fix(
    base: EstimateResult,
    prices_file: Path | None,
    currency: str,
    region: str | None,
    budget_per_hour: float | None,
    budget_total: float | None,
) -> Recommendation | None:
    """Before declaring the budget impossible: the cheap changes on cards within it. The
    answer is then for the changed job: the first change whose pick keeps the guide's
    headroom, else the first that fits; None when no change has a pick within the budget.
    Each change is searched, and only the one answered is worked out in full (verdict,
    pitfalls, free tiers): a change over budget too is read for nothing else."""
    tight: tuple[str, Search] | None = None
    prices_now = card_prices(prices_file, currency, region)
    for code, changed in budget_fixes(base):
        trial_setups = Setups(changed)
        if not may_meet_budget(trial_setups, prices_now, budget_per_hour, budget_total):
            continue  # its search would end over budget too
        trial = search_cards(
            trial_setups, prices_file, currency, region, budget_per_hour, budget_total
        )
        cheapest = None if trial.over_budget else cheapest_of(trial.picks)
        if cheapest is not None:
            if not cheapest.risky:
                return fixed_answer(
                    trial, code, base, budget_per_hour, budget_total, currency, region
                )
            tight = tight or (code, trial)
    if tight is not None:
        return fixed_answer(
            tight[1], tight[0], base, budget_per_hour, budget_total, currency, region
        )
    return None
