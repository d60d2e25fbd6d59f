"""A card named on a platform of its own (a Mac, an AMD Radeon or Instinct): the answer is
about that hardware. Picks stay on the platform (more MI300X, not A800s); where none is
rented there, nothing is proposed to rent while the hardware runs the job, and one rented
alternative, said to be one, where it cannot."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.models.result import EstimateResult
from advisor.recommend.card_counts import adds_cards
from advisor.recommend.rank import cheapest_of
from advisor.recommend.verdict import verdict_of
from advisor.types import Option

# Vendors whose owners ask about their own stack (Metal, ROCm): NVIDIA cards are compared
# with rented NVIDIA cards as before.
PLATFORMS = ("Apple", "AMD")


def platform_of(gpu: GpuSpec | None) -> str | None:
    """The named card's platform when it is one the answer keeps to."""
    return gpu.vendor if gpu is not None and gpu.vendor in PLATFORMS else None


def on_platform(o: Option, vendor: str) -> bool:
    gpu = catalog.gpus().get(o.gpu_id)
    return gpu is not None and gpu.vendor == vendor


def keep_to_platform(
    options: list[Option],
    picks: list[Option],
    named: Option,
    named_gpu: GpuSpec,
    setup: EstimateResult,
) -> tuple[list[Option], list[Option], bool]:
    """(options, picks, rent_instead): the platform's own rented cards when there are any;
    else none while the named hardware runs the job as is or with a change of its own;
    else the cheapest rented setup alone, `rent_instead` saying it is the alternative."""
    vendor = named_gpu.vendor
    same = [o for o in picks if on_platform(o, vendor)]
    if same:
        return [o for o in options if on_platform(o, vendor)], same, False
    if _runs_here(named, named_gpu, setup):
        return [], [], False
    best = cheapest_of(picks)
    return ([best], [best], True) if best is not None else ([], [], False)


def _runs_here(named: Option, gpu: GpuSpec, setup: EstimateResult) -> bool:
    if named.fits and not named.blocked:
        return True
    _, codes = verdict_of(setup, named, gpu, own_card=True)
    return any(not adds_cards(c) for c in codes) or (
        gpu.vendor != "Apple" and any(adds_cards(c) for c in codes)
    )


def platform_fixes(fixes: list[str], gpu: GpuSpec) -> list[str]:
    """A Mac takes no second GPU: "more cards" is no change on it."""
    if gpu.vendor != "Apple":
        return fixes
    return [f for f in fixes if not adds_cards(f)]
