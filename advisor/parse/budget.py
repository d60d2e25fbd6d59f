"""Budgets: ¥5/h, 3元/小时, $2/h (per hour) or 预算 500元, budget $100 (the whole job)."""

from __future__ import annotations

from advisor.parse.scan import Budget, Reading, Scan, number


def take_budget(s: Scan) -> Budget | None:
    if (m := s.take(r"[¥￥]\s*(\d+(?:\.\d+)?)\s*(?:/|每|per\s*)\s*(?:hour|hr|h|小时|时)")) or (
        m := s.take(
            r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:元|块|rmb|cny)\s*(?:/|每|per\s*)\s*(?:hour|hr|h|小时|时)"
        )
    ):
        return Budget(amount=number(m.group(1)), currency="CNY", per_hour=True)
    if m := s.take(r"\$\s*(\d+(?:\.\d+)?)\s*(?:/|per\s*)\s*(?:hour|hr|h)"):
        return Budget(amount=number(m.group(1)), currency="USD", per_hour=True)
    if m := s.take(
        r"(?:预算|budget)\s*[:：]?\s*([¥￥$])?\s*(\d+(?:\.\d+)?)\s*(元|块|rmb|cny|usd|dollars?)?"
    ):
        usd = m.group(1) == "$" or (m.group(3) or "").startswith(("usd", "dollar"))
        return Budget(amount=number(m.group(2)), currency="USD" if usd else "CNY", per_hour=False)
    return None


def recognize_budget(s: Scan, r: Reading) -> None:
    """Before sizes and cards: "3元/小时" must not read as a size."""
    r.budget = take_budget(s)
