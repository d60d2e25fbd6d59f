"""How numbers are shown to users, in one place for the engine's lines and the templates
(advisor.render registers each as a filter): bytes as GiB, money without false precision,
hours, seconds, token counts, a card's free share. Kept apart from the rendering so the
engine's own lines (pitfalls, fixes) and the replies round a figure the same way."""

from __future__ import annotations

import math
import re


def headroom(fraction: float) -> str:
    """A card's free share, rounded down: 19.6% free is "19%", never "20% headroom, the
    guide asks for 20%" beside a tight verdict, and the verdict line and the "Watch out"
    line of one answer show the same number."""
    return f"{math.floor(fraction * 100 + 1e-9):.0f}%"


def gib(value: float | int | None) -> str:
    if value is None:
        return "?"
    v = value / 2**30
    return f"{v:.1f} GiB" if v < 100 else f"{v:.0f} GiB"


def bar(part: float, whole: float, width: int = 10) -> str:
    """A text bar for part of a whole (a term of the VRAM total)."""
    n = max(0, min(width, round(part / whole * width))) if whole else 0
    return "█" * n + "░" * (width - n)


def pct(fraction: float) -> str:
    return f"{fraction * 100:.0f}%"


SYMBOLS = {"CNY": "¥", "USD": "$"}


def figure(value: float) -> str:
    """An amount of money as users see it, without false precision: whole units (with
    separators) from 100 up, else three significant digits. Prices are platform list
    prices times an estimate (hours, card counts) whose own band is ±30% or more, so
    "¥32544.15" claimed a cent it cannot know: 32,544 / 478 / 47.8 / 4.98 / 0.125. Every
    money filter below goes through here (tests/test_money_rounding.py)."""
    if abs(value) >= 99.95:
        return f"{round(value):,}"
    return f"{float(f'{value:.3g}'):g}"


def money(price) -> str:  # noqa: ANN001
    if price is None:
        return "—"
    return f"{SYMBOLS.get(price.currency, price.currency)}{figure(price.amount)}/h"


def listed(price) -> str:  # noqa: ANN001
    """What the platform itself charges, for a price converted from another currency."""
    if price is None or price.listed_currency is None:
        return ""
    sym = SYMBOLS.get(price.listed_currency, price.listed_currency)
    return f"{sym}{figure(price.listed_amount)}/h"


def each(price, count: int) -> str:  # noqa: ANN001
    """One card's rate of a price for `count` cards, in the currency shown first (the
    platform's own when converted): "$0.12/h"."""
    if price.listed_currency is not None:
        return f"{amount(price.listed_amount / count, price.listed_currency)}/h"
    return f"{amount(price.amount / count, price.currency)}/h"


def amount(value: float | None, currency: str) -> str:
    """A total in a currency: ¥12.4, $3.1, ¥32,544 (`figure`)."""
    if value is None:
        return "—"
    return f"{SYMBOLS.get(currency, currency)}{figure(value)}"


def whole(value: float | None, currency: str) -> str:
    """A purchase price in whole units with separators: ¥80,000, $12,000; other currencies
    by their code (a budget in euros is shown as typed: EUR 5,000)."""
    if value is None:
        return "—"
    sym = SYMBOLS.get(currency)
    text = f"{abs(value):,.0f}"
    sign = "-" if value < 0 else ""
    return f"{sign}{sym}{text}" if sym else f"{sign}{currency} {text}"


def day(source_date: str | None) -> str:
    """The date part of a price's source date ("~2026 (undated mirror)" -> "~2026")."""
    m = re.match(r"~?[\d-]+", source_date or "")
    return m.group(0) if m else "?"


def hours(h: float | None) -> str:
    """Training time without false precision: 3.4, 42, 1,250 (hours); under 0.1 h two
    significant digits (0.03), so a whole-job cost beside it is rate × hours as shown,
    never a cost beside "0.0 h"."""
    if h is None:
        return "?"
    if 0 < h < 0.095:
        return f"{h:.2g}"
    return f"{h:.1f}" if h < 10 else f"{round(h):,}"


def ktokens(n: int | None) -> str:
    """A length found by search (the longest context that fits), without false precision:
    74826 -> "74k", rounded down to whole thousands so the figure shown still fits."""
    if n is None:
        return "—"
    return f"{n // 1000}k" if n >= 1000 else str(n)


def sig2(x: float | None) -> str:
    """Seconds to two significant digits: 55.05 -> 55, 1.23 -> 1.2, 0.654 -> 0.65."""
    if x is None:
        return "?"
    if x >= 100:
        return f"{round(x):,}"
    return f"{float(f'{x:.2g}'):g}"


def tokens(n: int | None) -> str:
    """4096 -> 4k, 131072 -> 128k: the way users write contexts."""
    if n is None:
        return "?"
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)
