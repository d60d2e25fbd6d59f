"""Prices for one card: the listing's own currency and platform, conversions labelled.

A Chinese reply prefers platforms payable from China (data/platforms.toml); an English one
the global platforms. A listing in the other currency is converted for comparison only and
keeps what the platform actually charges beside it."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from advisor import catalog
from advisor.memo import Memo, prices_key
from advisor.specs import PriceSpec
from advisor.types import Price

# Reply currency -> the region whose platforms come first.
REGION_BY_CURRENCY = {"CNY": "china", "USD": "global"}
ALL_REGIONS = "all"  # the reader asked for every platform, ranked by price alone


platforms = catalog.platforms
cny_per_usd = catalog.cny_per_usd


def convert(amount: float, from_currency: str, to_currency: str) -> float:
    if from_currency == to_currency:
        return amount
    rate = cny_per_usd()
    return amount * rate if to_currency == "CNY" else amount / rate


@cache
def payable_in_china(platform: str) -> bool:
    return any(platform.startswith(p) for p in platforms()["china"]["platforms"])


def region_of(platform: str) -> str:
    return "china" if payable_in_china(platform) else "global"


def cheapest_price(
    gpu_id: str, prices: list[PriceSpec], currency: str | None, region: str | None = None
) -> Price | None:
    """The lowest on-demand price we know for one card. Listings in the reader's region come
    first (region defaults from the currency: CNY -> China, USD -> global; "all": none
    first); among them the lowest, converted to `currency` only when the listing is in the
    other one."""
    mine = [
        p
        for p in prices
        if p.gpu_id == gpu_id and "spot" not in p.tier and "serverless" not in p.tier
    ]
    if not mine:
        return None
    want = currency or mine[0].currency
    region = region or REGION_BY_CURRENCY.get(want, "global")

    def local(platform: str) -> bool:
        return region == ALL_REGIONS or region_of(platform) == region

    def key(p: PriceSpec) -> tuple[bool, float]:
        return (not local(p.platform), convert(p.price_per_gpu_hour, p.currency, want))

    best = min(mine, key=key)
    converted = best.currency != want
    return Price(
        amount=round(convert(best.price_per_gpu_hour, best.currency, want), 2),
        currency=want,
        platform=best.platform,
        source_date=best.source_date,
        listed_amount=best.price_per_gpu_hour if converted else None,
        listed_currency=best.currency if converted else None,
        cny_per_usd=cny_per_usd() if converted else None,
        in_region=local(best.platform),
    )


# `times` by (price object, count): a recommendation weighs every card at several counts,
# and the card prices come from the shared per-card tables. The entry holds the price it
# was made from, so that object's id cannot be reused while the entry lives.
_TIMES: Memo[tuple[Price, Price]] = Memo("price_times", 4096, table=True)


def times(price: Price | None, count: int) -> Price | None:
    """The price for `count` cards. Shared: change it only on a copy (`dataclasses.replace`)."""
    if price is None:
        return None
    return _TIMES.get((id(price), count), lambda: (price, _times(price, count)))[1]


def _times(price: Price, count: int) -> Price:
    listed = round(price.listed_amount * count, 2) if price.listed_amount is not None else None
    return replace(price, amount=round(price.amount * count, 2), listed_amount=listed)


class _TimesTable(dict[str, Price | None]):
    """gpu id -> `times(price, count)` of one table of card prices, each filled when first
    read (a search reads a few cards at each count; with the memos off, no more)."""

    def __init__(self, prices: dict[str, Price | None], count: int) -> None:
        super().__init__()
        self.prices = prices  # held: its id is part of the memo key below
        self.count = count

    def __missing__(self, gpu_id: str) -> Price | None:
        price = self[gpu_id] = times(self.prices[gpu_id], self.count)
        return price


# Every card's price for `count` cards, by price table (advisor.memo): the search over cards
# reads one per card count. The table holds the prices it was made from, so that dict's id
# cannot be reused while the entry lives.
_TABLE_TIMES: Memo[_TimesTable] = Memo("price_table_times", 256, table=True)


def times_table(prices: dict[str, Price | None], count: int) -> dict[str, Price | None]:
    """gpu id -> `times(price, count)` for a shared table of card prices. Shared: read only."""
    return _TABLE_TIMES.get((id(prices), count), lambda: _TimesTable(prices, count))


# The cheapest listing of every card, by price list, currency and region (advisor.memo):
# the same few tables serve every answer.
_PRICE_TABLES: Memo[dict[str, Price | None]] = Memo("price_table", 64, table=True)


def card_prices(
    prices_file: Path | None, currency: str, region: str | None
) -> dict[str, Price | None]:
    """gpu id -> `cheapest_price` of that card. Shared: change a price only by copying it."""

    def table() -> dict[str, Price | None]:
        by_gpu: dict[str, list[PriceSpec]] = {}
        for p in catalog.load_prices(prices_file):
            by_gpu.setdefault(p.gpu_id, []).append(p)
        return {g: cheapest_price(g, by_gpu.get(g, []), currency, region) for g in catalog.gpus()}

    key = (catalog.catalog_version(), prices_key(prices_file), currency, region)
    return _PRICE_TABLES.get(key, table)
