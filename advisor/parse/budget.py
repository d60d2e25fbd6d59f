"""Budgets: ¥5/h, 3元/小时, 5块一小时, 每小时 5 块, $2/h (per hour) or 预算 500元, budget $100,
$300 total (the whole job). The words around a budget ("预算", "budget", "total") are read
with it, never left over."""

from __future__ import annotations

import re

from advisor.parse.scan import Budget, Reading, Scan, number

_NUM = r"(?<![\d.])(\d+(?:\.\d+)?)"
_CNY = r"(?:元|块钱|块|rmb|cny|yuan|人民币)"
_USD = r"(?:usd|dollars?|bucks|刀|美元|美金)"
_HOUR = r"(?:hours?|hrs?|h|小时|个小时|钟头|个钟头|时)(?![a-z])"
_PER = r"(?:/|每|per|an?|一个?|1个?)"
_LEAD = r"(?:(?:总|total\s*)?(?:预算|budget)\s*(?:是|为|大概|约|有)?\s*[:：]?\s*)?"
_TAIL = r"(?:\s*(?:total|in total|总共|总计|左右|以内|以下))?"


def _currency(sign: str | None, unit: str | None) -> str:
    usd = sign == "$" or bool(unit and re.fullmatch(_USD, unit))
    return "USD" if usd else "CNY"


def _per_hour(m: re.Match[str]) -> Budget | None:
    """A per-hour match counts only with a currency or a budget word ("每小时 100 张" is not)."""
    sign, amount, unit = m.group("sign"), m.group("amount"), m.group("unit")
    if not (sign or unit or re.search(r"预算|budget", m.group(0), re.I)):
        return None
    return Budget(amount=number(amount), currency=_currency(sign, unit), per_hour=True)


_AMOUNT = rf"(?P<sign>[¥￥$])?\s*(?<![\d.])(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>{_CNY}|{_USD})?"
_PER_HOUR = (
    # amount first: "¥5/h", "5块一小时", "5元/时", "$2 an hour", "预算 5 元每小时"
    re.compile(rf"{_LEAD}{_AMOUNT}\s*{_PER}\s*{_HOUR}{_TAIL}", re.I),
    # the hour first: "每小时 5 块", "一小时 3 块钱", "预算每小时5元", "per hour $2"
    re.compile(
        rf"{_LEAD}(?:每|一|per|an?)\s*{_HOUR}\s*(?:预算|budget)?\s*[:：]?\s*{_AMOUNT}{_TAIL}", re.I
    ),
)
# the whole job: "预算 500元", "budget $100", "总预算 2000", "$300 total"
_TOTAL = (
    re.compile(
        rf"(?:总|total\s*)?(?:预算|budget)\s*(?:是|为|大概|约|有)?\s*[:：]?\s*{_AMOUNT}{_TAIL}",
        re.I,
    ),
    re.compile(
        r"(?P<sign>[¥￥$])\s*(?P<amount>\d+(?:\.\d+)?)\s*(?:total|in total|总共|总计)", re.I
    ),
)


# What each per-hour pattern cannot match without (an amount's last digit and what follows
# it; an hour word): tested first, as the patterns' optional leading words and signs make re
# try them at every position, and most lines name no budget.
_PER_HOUR_CORE = (
    re.compile(rf"\d\s*(?:{_CNY}|{_USD})?\s*{_PER}\s*{_HOUR}", re.I),
    re.compile(rf"(?:每|一|per|an?)\s*{_HOUR}", re.I),
)


def take_budget(s: Scan) -> Budget | None:
    for core, pattern in zip(_PER_HOUR_CORE, _PER_HOUR, strict=True):
        if not core.search(s.text):
            continue
        _, budget = s.take_if(pattern, _per_hour)
        if budget is not None:
            return budget
    for pattern in _TOTAL:
        if m := s.take(pattern):
            unit = m.groupdict().get("unit")
            return Budget(
                amount=number(m.group("amount")),
                currency=_currency(m.group("sign"), unit),
                per_hour=False,
            )
    return None


def recognize_budget(s: Scan, r: Reading) -> None:
    """Before sizes and cards: "3元/小时" must not read as a size."""
    r.budget = take_budget(s)
