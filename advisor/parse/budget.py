"""Budgets: ¥5/h, 3元/小时, 5块一小时, 每小时 5 块, $2/h (per hour) or 预算 500元, budget $100,
$300 total (the whole job). The words around a budget ("预算", "budget", "total") are read
with it, never left over. A total may carry a scale ("8万", "8w", "80k", "$12k") and
thousands separators ("¥80,000"); a line about buying hardware ("配一台", "buy"; vocab
kinds.toml) also reads a bare amount with a scale or a currency ("8万配一台", "$12k
workstation", "12000 USD") and names a currency the bot does not price in ("5000 EUR"), so
the answer can say so rather than read it as yuan."""

from __future__ import annotations

import re
from functools import cache

from advisor.parse import vocab
from advisor.parse.question import buys_hardware
from advisor.parse.scan import Budget, Reading, Scan, number, reject

# "8万" (normalized to "8 万"), "8w", "80k", "1.2m": a total's scale. Read only inside a
# budget (a sign, a currency or a budget word beside it): "1万条" alone is a data size.
_SCALE = {"万": 1e4, "w": 1e4, "k": 1e3, "千": 1e3, "m": 1e6, "百万": 1e6, "亿": 1e8}
# "10个w", "十个万": a spoken count of ten-thousands
_SCALE_RE = r"(?:\s*(?:个\s*)?(?P<scale>百万|万|亿|千|w|k|m)(?![a-z]))?"
_CNY = r"(?:元|块钱|块|rmb|cny|yuan|人民币)"
_USD = r"(?:usd|dollars?|bucks|刀|美元|美金)"
_HOUR = r"(?:hours?|hrs?|h|小时|个小时|钟头|个钟头|时)(?![a-z])"
_PER = r"(?:/|每|per|an?|一个?|1个?)"
_LEAD = r"(?:(?:总|total\s*)?(?:预算|budget)\s*(?:是|为|大概|约|有)?\s*[:：]?\s*)?"
_TAIL = r"(?:\s*(?:total|in total|总共|总计|左右|以内|以下))?"


def _currency(sign: str | None, unit: str | None) -> str:
    usd = sign == "$" or bool(unit and re.fullmatch(_USD, unit))
    return "USD" if usd else "CNY"


# Currencies written out that the bot does not price in: read so the answer can say so.
_OTHER = {
    "EUR": r"eur|euros?|€|欧元",
    "GBP": r"gbp|pounds?|£|英镑",
    "JPY": r"jpy|yen|円|日元",
    "HKD": r"hkd|港币|港元",
    "TWD": r"twd|ntd?|新台币|台币",
    "KRW": r"krw|won|韩元",
    "SGD": r"sgd|新加坡元",
    "RUB": r"rub|rubles?|roubles?|₽|卢布",
    "INR": r"inr|rupees?|₹|卢比",
    "AUD": r"aud|澳元|澳币",
    "CAD": r"cad|加元|加币",
}
_OTHER_RE = "|".join(_OTHER.values())
_SIGNS = {"€": "EUR", "£": "GBP", "₽": "RUB", "₹": "INR"}


def _other_currency(text: str | None) -> str | None:
    for code, pattern in _OTHER.items():
        if text and re.fullmatch(pattern, text, re.I):
            return code
    return None


def _scaled(m: re.Match[str]) -> float:
    scale = m.groupdict().get("scale")
    value = _amount(m.group("amount")) * (_SCALE[scale.lower()] if scale else 1.0)
    return -value if m.groupdict().get("neg") else value


def _per_hour(m: re.Match[str]) -> Budget | None:
    """A per-hour match counts only with a currency or a budget word ("每小时 100 张" is not)."""
    sign, amount, unit = m.group("sign"), m.group("amount"), m.group("unit")
    if not (sign or unit or re.search(r"预算|budget", m.group(0), re.I)):
        return None
    return Budget(amount=number(amount), currency=_currency(sign, unit), per_hour=True)


# Chinese numerals before a scale: "两万", "十万", "二十五万", "五千" (a 预算 is as often written
# so as in digits)
_CN_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_AMOUNT = r"[一二两三四五六七八九十百]{1,4}(?=\s*个?\s*(?:万|千|w))"


def _cn_number(text: str) -> float:
    """A Chinese numeral up to 999: 二十五 = 25, 十 = 10, 一百 = 100, 三 = 3."""
    total, digit = 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        else:  # 十 or 百: the digit before it (one when none) times ten or a hundred
            total += (digit or 1) * (10 if ch == "十" else 100)
            digit = 0
    return float(total + digit)


def _amount(text: str) -> float:
    return _cn_number(text) if text[0] in _CN_DIGITS or text[0] in "十百" else number(text)


_AMOUNT = rf"(?P<sign>[¥￥$])?\s*(?<![\d.])(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>{_CNY}|{_USD})?"
# A total: thousands separators and a scale ("¥80,000", "8万元", "$12k", "预算 -5000")
_TOTAL_AMOUNT = (
    rf"(?P<sign>[¥￥$€£₽₹])?\s*(?P<neg>-)?\s*(?<![\d.])(?P<amount>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|{_CN_AMOUNT})"
    rf"{_SCALE_RE}\s*(?P<unit>{_CNY}|{_USD}|{_OTHER_RE})?(?![a-z])"
)
_PER_HOUR = (
    # amount first: "¥5/h", "5块一小时", "5元/时", "$2 an hour", "预算 5 元每小时"
    re.compile(rf"{_LEAD}{_AMOUNT}\s*{_PER}\s*{_HOUR}{_TAIL}", re.I),
    # the hour first: "每小时 5 块", "一小时 3 块钱", "预算每小时5元", "per hour $2"
    re.compile(
        rf"{_LEAD}(?:每|一|per|an?)\s*{_HOUR}\s*(?:预算|budget)?\s*[:：]?\s*{_AMOUNT}{_TAIL}", re.I
    ),
)
# the whole job: "预算 500元", "budget $100", "总预算 2000", "$300 total", "预算8万"
_TOTAL = (
    re.compile(
        rf"(?:总|total\s*)?(?:预算|budget)\s*(?:是|为|大概|约|有|of)?\s*[:：]?\s*{_TOTAL_AMOUNT}{_TAIL}",
        re.I,
    ),
    re.compile(
        r"(?P<sign>[¥￥$])\s*(?P<amount>\d+(?:\.\d+)?)\s*(?:total|in total|总共|总计)", re.I
    ),
    # the budget word after: "80k budget", "8万的预算"
    re.compile(rf"{_TOTAL_AMOUNT}\s*(?:的)?\s*(?:总预算|预算|budget)", re.I),
)
# On a line about buying hardware, an amount with a scale or a currency is the budget:
# "8万配一台", "$12k workstation", "12000 USD", "¥80,000 的服务器"
_PURCHASE_TOTAL = re.compile(_TOTAL_AMOUNT + _TAIL, re.I)


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
    for pattern in _TOTAL[:2]:
        if m := s.take(pattern):
            return _total(m)
    _, budget = s.take_if(_TOTAL[2], _purchase_total)
    return budget


def _total(m: re.Match[str]) -> Budget:
    sign, unit = m.group("sign"), m.groupdict().get("unit")
    other = _other_currency(unit) or _SIGNS.get(sign or "")
    return Budget(amount=_scaled(m), currency=other or _currency(sign, unit), per_hour=False)


def _purchase_total(m: re.Match[str]) -> Budget | None:
    """An amount counts only with a sign, a currency or a scale of money ("8万", "$12k")."""
    if not (m.group("sign") or m.group("unit") or m.group("scale")):
        return None
    return _total(m)


def take_purchase_budget(s: Scan) -> Budget | None:
    _, budget = s.take_if(_PURCHASE_TOTAL, _purchase_total)
    return budget


def recognize_budget(s: Scan, r: Reading) -> None:
    """Before sizes and cards: "3元/小时" must not read as a size. On a line about buying
    hardware, a bare "8万" or "$12k" too."""
    r.budget = take_budget(s)
    if r.budget is None and buys_hardware(s.text):
        r.budget = take_purchase_budget(s)


_HOURS = r"(?P<{}>\d+(?:\.\d+)?)\s*(?:个小时|个钟头|小时|钟头|hours?|hrs?|h)(?![a-z])"


@cache
def _hours_per(period: str) -> re.Pattern[str]:
    """Hours per `period` (day or week), the period's word before or after the number."""
    before = vocab.knob_words(f"hours_per_{period}_before")
    after = vocab.knob_words(f"hours_per_{period}_after")
    # "每天大概用 8 小时": a few Chinese words between the day and the number
    return re.compile(
        rf"{before}\s*(?:[\u4e00-\u9fff]\s*){{0,6}}?(?<![\d.]){_HOURS.format('a')}"
        rf"|(?<![\d.]){_HOURS.format('b')}\s*{after}",
        re.I,
    )


def recognize_hours_per_day(s: Scan, r: Reading) -> None:
    """ "每天大概用8小时", "一天跑10小时", "8h a day", "每周40小时" (a seventh of it a day),
    "24/7": the hours a day the cards would be busy, read before any other number reader
    and outside 0-24 a day refused."""
    for period, days in (("day", 1), ("week", 7)):
        if m := s.take(_hours_per(period)):
            hours = float(m.group("a") or m.group("b")) / days
            if not 0 < hours <= 24:
                raise reject("bad_value", "hours_per_day")
            r.hours_per_day = round(hours, 1)
            return
    if s.take(vocab.knob_words("around_the_clock")):
        r.hours_per_day = 24.0
