"""The card the user named: a card known only by its memory, the fewest of it that run the
job, whether the answer is several of it, and the small-card recipe it is answered for."""

from __future__ import annotations

from advisor.catalog import GpuSpec
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.card_counts import COUNTS, adds_cards
from advisor.recommend.fix_candidates import SLOW
from advisor.recommend.headroom import HEADROOM, MIN_FREE
from advisor.recommend.options import Recommendation
from advisor.recommend.platform import platform_of
from advisor.recommend.rank import (
    option,
)
from advisor.recommend.recipes import faster_route, small_card_recipe
from advisor.recommend.search import Setups
from advisor.recommend.verdict import verdict_of
from advisor.types import Option, Price

# What nvidia-smi reports of a card's memory (gpus.toml: a 12 GB card shows 11.88 GiB).
USABLE_SHARE = 0.99


def recipe_for_named(
    setup: EstimateResult, named: Option, gpu: GpuSpec
) -> tuple[str, Workload] | None:
    """The recipe rung for a diffusion job that does not fit the named card with the
    guide's headroom as asked; None when it does, or when the user chose the knobs."""
    if named.blocked or (named.fits and not named.risky) or named.count != 1:
        return None
    usable = gpu.usable_vram_bytes
    return small_card_recipe(setup, gpu, int(usable * (1 - HEADROOM)), int(usable * (1 - MIN_FREE)))


def several_on_platform(named: Option, gpu: GpuSpec, setup: EstimateResult) -> bool:
    """An AMD Instinct card named alone that cannot hold the job, nor with any change on
    that card: no larger card exists on the platform, so the answer is several of it. A
    Radeon is the asker's own card, judged alone with what would make it fit (a 7900 XTX
    with Qwen2.5-14B in bf16: a GGUF quant on it, then a second card; a Mac takes no second
    GPU)."""
    if not (
        platform_of(gpu) == "AMD"
        and gpu.segment == "datacenter"
        and named.count == 1
        and not named.fits
        and not named.blocked
    ):
        return False
    _, codes = verdict_of(setup, named, gpu, own_card=True)
    return all(adds_cards(c) for c in codes)


def fewest_cards(setups: Setups, gpu: GpuSpec, price: Price | None) -> int:
    """The fewest cards of `gpu` that run the job with the guide's headroom; else the fewest
    that fit at all; else the most counted."""
    fitting = []
    for count in COUNTS:
        o = option(setups.at(count), gpu, count, price, blocked=[])
        if o.fits and not o.risky:
            return count
        if o.fits:
            fitting.append(count)
    return fitting[0] if fitting else COUNTS[-1]


def card_with(vram_gib: float) -> GpuSpec:
    """A card known only by its memory ("我只有 12g 显存"): judged on memory alone; its
    kernels and bandwidth are unknown, so nothing is blocked and no speed is claimed."""
    return GpuSpec(
        id=f"vram-{vram_gib:g}g",
        name=f"{vram_gib:g} GB GPU",
        vendor="NVIDIA",
        segment="consumer",
        architecture="?",
        vram_gb=vram_gib,
        usable_vram_gib=round(vram_gib * USABLE_SHARE, 2),
        memory_bandwidth_gbs=0,
        spec_confidence="unknown",
        spec_read_date="-",
    )


def named_option(
    setups: Setups,
    gpu: GpuSpec,
    price: Price | None,
    count: int,
    *,
    counted: bool,
    ask_count: bool,
) -> tuple[Option, int, bool]:
    """The named card judged at its count: the fewest that run the job where the user asked
    how many (`ask_count`) without writing a count (`counted`). Returns the option, its count
    and whether the answer says the count was worked out."""
    if ask_count and not counted:
        count = fewest_cards(setups, gpu, price)
    named = option(setups.at(count), gpu, count, price, speed_always=True)
    if not counted and not ask_count and several_on_platform(named, gpu, setups.at(count)):
        # "MI300X llama3-405b fp8": no larger card exists on the platform; the answer
        # is the fewest of the named card that run it, said so (count_asked)
        count = fewest_cards(setups, gpu, price)
        named = option(setups.at(count), gpu, count, price, speed_always=True)
        ask_count = count > 1
    return named, count, ask_count


def for_recipe(
    rec: Recommendation, recipe: tuple[str, Workload], asked: EstimateResult, gpu: GpuSpec
) -> Recommendation:
    """The answer for the recipe people run on the named card, said to be for it; where the
    recipe offloads, a smaller format that needs less offload comes first."""
    faster = faster_route(asked, recipe[1], gpu)
    same = f"quantize:{faster.partition(':')[2]}" if faster else None
    fixes = [faster, *(f for f in rec.fixes if f != same)] if faster else rec.fixes
    verdict = rec.verdict
    slow = (verdict.fix or "").partition(":")[0] in SLOW if verdict is not None else False
    offloaded = (verdict.fix or "").startswith("quantize:") if verdict is not None else False
    if faster and verdict is not None and (slow or offloaded):
        # a smaller format at full speed costs less than streaming weights from RAM, and
        # resident beats a smaller format still offloaded
        verdict = verdict.model_copy(update={"fix": faster, "fix_tight": False})
    return rec.model_copy(
        update={"recipe": recipe[0], "asked": asked, "fixes": fixes, "verdict": verdict}
    )
