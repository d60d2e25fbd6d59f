"""The purchase catalog (data/purchase_prices.toml) and what a plan costs beside renting:
each card's dated price, the power a plan draws (PSU rating, watts at the wall), the cards'
resale after the horizon and the months until buying beats renting (advisor/kinds/purchase.py
builds the plans)."""

from __future__ import annotations

import math
import tomllib
from functools import cache
from typing import Any, NamedTuple

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import DATA_DIR, GpuSpec

HOURS_PER_MONTH = 730


@cache
def purchase_catalog() -> dict[str, Any]:
    with (DATA_DIR / "purchase_prices.toml").open("rb") as fh:
        return tomllib.load(fh)


class CardPrice(BaseModel):
    gpu_id: str
    condition: str  # new | used
    usd: float | None = None
    cny: float | None = None
    converted: str | None = None  # the side converted at platforms.toml's rate
    export_controlled: bool = False
    china_sku: bool = False
    china_sku_of: str | None = None  # the card this China SKU stands in for
    basis: str = "launch"  # launch | street | used | list (purchase_prices.toml's header)
    launch_usd: float | None = None  # a street price's launch price (MSRP), shown beside it
    launch_cny: float | None = None
    source: str
    read_date: str

    def price(self, currency: str) -> float:
        rate = catalog.cny_per_usd()
        if currency == "CNY":
            return self.cny if self.cny is not None else round((self.usd or 0) * rate)
        return self.usd if self.usd is not None else round((self.cny or 0) / rate)

    def is_converted(self, currency: str) -> bool:
        return (currency == "CNY" and self.cny is None) or (currency == "USD" and self.usd is None)

    def launch_price(self, currency: str) -> float | None:
        """The launch price (MSRP) beside a street price, in `currency` where it was read."""
        return self.launch_cny if currency == "CNY" else self.launch_usd


@cache
def card_prices() -> tuple[CardPrice, ...]:
    return tuple(CardPrice(**c) for c in purchase_catalog()["card"])


def china_sku_for(gpu_id: str) -> CardPrice | None:
    """The China SKU priced in place of an export-controlled card, where it has the same
    memory (the RTX 4090 D for the 4090: same 24 GB, 11% less compute); None where it has
    not (the 5090 D V2 is a 24 GB card, not the 32 GB 5090) or where none is listed."""
    gpus = catalog.gpus()
    asked = gpus.get(gpu_id)
    if asked is None or not any(e.gpu_id == gpu_id and e.export_controlled for e in card_prices()):
        return None
    for entry in card_prices():
        sku = gpus.get(entry.gpu_id)
        if entry.china_sku_of == gpu_id and sku is not None and sku.vram_gb == asked.vram_gb:
            return entry
    return None


class BuyPrice(NamedTuple):
    price: float | None  # one card: new, else used
    used: bool = False
    sold_as: str | None = None  # in yuan, the China SKU priced in its place (its name)
    # in yuan, an export-controlled card with no China SKU of its memory: hard to buy new
    restricted: bool = False


def buy_price(gpu_id: str, currency: str) -> BuyPrice:
    """What one card costs to buy, as a comparison shows it: in yuan an export-controlled
    card is the China SKU sold in its place (`china_sku_for`, named), else said to be hard
    to buy new there."""
    if currency == "CNY" and (sku := china_sku_for(gpu_id)) is not None:
        return BuyPrice(sku.price(currency), sold_as=catalog.gpus()[sku.gpu_id].name)
    ours = (e for e in card_prices() if e.gpu_id == gpu_id)
    entries = sorted(ours, key=lambda e: e.condition != "new")
    if not entries:
        return BuyPrice(None)
    first = entries[0]
    restricted = currency == "CNY" and first.export_controlled
    return BuyPrice(first.price(currency), first.condition == "used", restricted=restricted)


def power(gpu: GpuSpec, count: int) -> tuple[int, int]:
    """(PSU rating, watts at the wall under load)."""
    psu = purchase_catalog()["psu"]
    cards = (gpu.tdp_w or 300) * count
    rating = (cards + psu["host_watts"]) / psu["load_share"]
    wall = cards + purchase_catalog()["break_even"]["host_watts"]
    return int(math.ceil(rating / 50) * 50), int(wall)


def _months_between(start: str, end: str) -> int:
    (y0, m0), (y1, m1) = (map(int, d.split("-")[:2]) for d in (start, end))
    return (y1 - y0) * 12 + m1 - m0


def resale_share() -> float | None:
    """A new GeForce card's used price after the horizon as a share of its launch price: the
    lowest share read ([[resale]]) at an age at or past the horizon, at most 1 (a used price
    above launch is a shortage); None when none was read that old."""
    horizon = purchase_catalog()["break_even"]["horizon_months"]
    shares = [
        r["used_usd"] / r["launch_usd"]
        for r in purchase_catalog().get("resale", [])
        if _months_between(r["launched"], r["read"]) >= horizon
    ]
    return round(min(min(shares), 1.0), 2) if shares else None


def resale(entry: CardPrice, gpu: GpuSpec, count: int, currency: str) -> dict[str, Any]:
    """The cards' resale after the horizon (`resale_share` × launch price, else the price
    paid, × count): new GeForce cards only; the rest of the box is not counted."""
    share = resale_share()
    if share is None or entry.condition != "new" or gpu.segment != "consumer":
        return {"resale_share": None, "resale_value": None}
    price = entry.launch_price(currency) or entry.price(currency)
    return {"resale_share": share, "resale_value": round(price * count * share)}


def buy_or_rent(
    total: float,
    rent_hour: float | None,
    wall_watts: int,
    currency: str,
    utilization: float | None = None,
    resale_value: float | None = None,
) -> dict[str, Any]:
    """Months until buying beats renting the same cards (Dettmers: hardware ÷ (busy hours ×
    (rent − electricity))), a year of renting, and the verdict against the horizon: buy when
    it pays off within `buy_below_months`, rent when not within `horizon_months` (the cards'
    depreciation period), else close; with the hours a day that would pay off in each.
    `resale_value`: what the cards sell for after the horizon, taken off the hardware's cost
    (None: not counted, which favours renting; the answer says which). `utilization`: the
    share of the day the cards are busy as the user said it, else the catalog's."""
    be = purchase_catalog()["break_even"]
    busy = be["utilization"] if utilization is None else utilization
    out: dict[str, Any] = {"break_even_months": None, "rent_per_year": None, "verdict": None}
    if rent_hour is None:
        return out
    out["rent_per_year"] = round(rent_hour * HOURS_PER_MONTH * 12 * busy)
    kwh_price = be["electricity_cny_per_kwh" if currency == "CNY" else "electricity_usd_per_kwh"]
    saved_per_hour = rent_hour - wall_watts / 1000 * kwh_price
    if saved_per_hour <= 0:
        return out  # the electricity alone costs more than renting: never pays off
    cost = total - (resale_value or 0)
    months = round(cost / (HOURS_PER_MONTH * busy * saved_per_hour), 1)

    def hours_a_day(within_months: float) -> float:
        return round(cost / (HOURS_PER_MONTH * within_months * saved_per_hour) * 24, 1)

    out["break_even_months"] = months
    out["hours_per_day_horizon"] = hours_a_day(be["horizon_months"])
    out["hours_per_day_buy"] = hours_a_day(be["buy_below_months"])
    if months <= be["buy_below_months"]:
        out["verdict"] = "buy"
    elif months > be["horizon_months"]:
        out["verdict"] = "rent"
    else:
        out["verdict"] = "close"
    return out
