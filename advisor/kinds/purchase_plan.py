"""A purchase plan's cards and box: every (card, count) a budget covers, the best of them
for a job (the cheapest that fits) or for none (the most memory), and the plan the answer
shows for it (box, power, host RAM, buy-or-rent figures, what it runs)."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.fit import card_fit
from advisor.kinds.capability import capability_rows
from advisor.kinds.purchase_answer import Plan, PlanLine
from advisor.kinds.purchase_costs import CardPrice, buy_or_rent, card_prices, power, resale
from advisor.kinds.purchase_costs import purchase_catalog as _catalog
from advisor.kinds.purchase_fit import fit_recipe, fits
from advisor.models.workload import Workload
from advisor.recommend import cheapest_price


def box_for(count: int, currency: str, card_only: bool = False) -> tuple[str, float]:
    """The machine around `count` cards; `card_only`: cards for the asker's own PC (none)."""
    if card_only:
        return "own_pc", 0.0
    for box in _catalog()["box"]:
        if count <= box["max_cards"]:
            return box["kind"], float(box[currency.lower()])
    raise ValueError(f"no box for {count} cards")


def max_cards(gpu: GpuSpec) -> int:
    limits = _catalog()["limits"]
    return limits["consumer_max_cards"] if gpu.segment == "consumer" else limits["max_cards"]


def host_ram_gb(vram_gb: float) -> int:
    """At least the cards' memory (Dettmers' hardware guide), in a size people buy."""
    for size in (32, 64, 128, 256, 512, 1024):
        if size >= vram_gb:
            return size
    return 2048


# Cards for a PC the asker has ("预算3000买显卡"): as many as a desktop takes
OWN_PC_MAX_CARDS = 2


def build_plan(
    entry: CardPrice,
    count: int,
    currency: str,
    workload: Workload | None,
    china: bool,
    card_only: bool,
    rented: tuple[str, int] | None = None,
) -> Plan:
    """`rented`: the card and count the line would rent instead ("or rent an A100"); else
    the same cards rented."""
    gpu = catalog.gpus()[entry.gpu_id]
    unit = entry.price(currency)
    box_kind, box_price = box_for(count, currency, card_only)
    psu, wall = power(gpu, count)
    vram = gpu.vram_gb * count
    rent_id, rent_count = rented or (gpu.id, count)
    rent = cheapest_price(rent_id, catalog.load_prices(), currency)
    rent_hour = rent.amount * rent_count if rent is not None else None
    total = unit * count + box_price
    costs = resale(entry, gpu, count, currency)
    costs |= buy_or_rent(total, rent_hour, wall, currency, None, costs["resale_value"])
    sku = next((e.gpu_id for e in card_prices() if e.china_sku_of == gpu.id), None)
    fit = (None, None) if workload is None else fit_recipe(workload, gpu, count)
    return Plan(
        **costs,
        china_sku_name=catalog.gpus()[sku].name if sku and china else None,
        lines=[
            PlanLine(
                gpu_id=gpu.id,
                gpu_name=gpu.name,
                count=count,
                unit_price=unit,
                condition=entry.condition,
                price_converted=entry.is_converted(currency),
                price_basis=entry.basis,
                launch_price=entry.launch_price(currency),
                price_source=entry.source,
                price_date=entry.read_date,
            )
        ],
        currency=currency,
        box_kind=box_kind,
        box_price=box_price,
        total=total,
        vram_gb=vram,
        psu_watts=psu,
        host_ram_gb=host_ram_gb(vram),
        wall_watts=wall,
        blower_cards=count >= 3,
        fits_workload=None if workload is None else fit[0],
        recipe=None if workload is None else fit[1],
        runs=capability_rows(gpu, count, card_fit(gpu.id, count)),
        rent_per_hour=rent_hour,
        rent_name=f"{rent_count}× {catalog.gpus()[rent_id].name}" if rented else None,
        export_controlled=entry.export_controlled and china,
        china_sku=entry.china_sku and china,
        geforce=gpu.segment == "consumer",
    )


def budget_options(
    currency: str, budget: float | None, used: bool, card_only: bool
) -> list[tuple[CardPrice, int, float]]:
    """Every (card, count, total) the budget covers; `used`: used cards allowed."""
    out = []
    for entry in card_prices():
        gpu = catalog.gpus().get(entry.gpu_id)
        if gpu is None or (entry.condition == "used" and not used):
            continue
        if entry.china_sku and currency != "CNY":
            continue  # the China SKUs (4090 D) are sold in China
        most = OWN_PC_MAX_CARDS if card_only else max_cards(gpu)
        for count in range(1, most + 1):
            total = entry.price(currency) * count + box_for(count, currency, card_only)[1]
            if budget is None or total <= budget:
                out.append((entry, count, total))
    return out


def best_option(
    currency: str, budget: float | None, workload: Workload | None, used: bool, card_only: bool
) -> tuple[CardPrice, int, float] | None:
    options = budget_options(currency, budget, used, card_only)
    # in China the cards sold there come first: an export-controlled card (the global 5090,
    # the 4090, A100, H100) needs a US licence, so a plan names it only when nothing else does
    sold_here = [o for o in options if not (currency == "CNY" and o[0].export_controlled)]
    if workload is not None:
        for group in (sold_here, options):
            fitting = [o for o in group if fits(workload, catalog.gpus()[o[0].gpu_id], o[1])]
            if fitting:  # the cheapest that fits; fewer cards on a tie (one box, less power)
                return min(fitting, key=lambda o: (o[2], o[1]))
    if not options or budget is None:
        return None
    options = sold_here or options

    min_card_gb = _catalog()["limits"]["min_card_gb"]

    def value(o: tuple[CardPrice, int, float]) -> tuple[bool, float, float, float]:
        # cards of the guide's size first (a model split over fewer, larger cards runs
        # better: four 16 GB cards are not two 32 GB ones), then memory, bandwidth, price
        gpu = catalog.gpus()[o[0].gpu_id]
        big = gpu.vram_gb >= min_card_gb
        return (big, gpu.vram_gb * o[1], gpu.memory_bandwidth_gbs * o[1], -o[2])

    return max(options, key=value)


def cheapest_total(currency: str, card_only: bool) -> float:
    return min(total for _, _, total in budget_options(currency, None, True, card_only))
