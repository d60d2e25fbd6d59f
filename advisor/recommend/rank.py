"""Candidates and ranking: every card at the fewest cards that run the job, constraints
first (constraints.py), budgets as hard filters, then cheapest / best value / fastest."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from advisor import catalog
from advisor.audio_speed import AudioSpeed, realtime_factor
from advisor.catalog import GpuSpec
from advisor.constraints import Requirement, blockers, tp_ok
from advisor.memo import ByIdentity
from advisor.models.choices import Kind, Runtime
from advisor.models.result import EstimateResult
from advisor.recommend.fixes import CheapFixes, fixes_for
from advisor.recommend.headroom import HEADROOM, runs_in
from advisor.recommend.pricing import times
from advisor.recommend.speed import (
    NO_SPEED,
    CardSpeed,
    SpeedRow,
    card_speed,
    speed_facts,
    speed_key,
    speed_row,
)
from advisor.types import Option, Price
from advisor.video_speed import ClipTime, clip_seconds

# "Fastest" is chosen among setups that cost at most this many times the cheapest per hour:
# a B200 is not the answer for bert-base.
FASTEST_PRICE_FACTOR = 4.0
# Engines that take a set share of the card (--gpu-memory-utilization, --mem-fraction-static).
SHARE = (Runtime.vllm, Runtime.sglang)
FASTEST_JOB_COST_FACTOR = 2.0
# Setups within this share of the fastest's speed are taken as tied (fastest_of).
FASTEST_TIE = 0.05

# Above this share of the card free, a fit is said without the band's high end: the band's
# upper tail comes from rare runs well over the estimate (the classic band's high end is
# +131%), and a job using under half the card is not one to warn about.
HEDGE_HEADROOM = 0.5
# The hedge names the measured level's high end (data/band.toml, the level the estimate's band
# comes from) only where that level is narrow enough to inform: at most +50% over the
# estimate. The fitted levels fall in two groups, +15% to +40% (LLM inference and training,
# diffusion inference, quantized inference) and +65% to +113% (classic training, quantized
# training, unmodelled stacks, guessed architectures), with nothing in between; a high end of
# +92% fires on every fit with less than 48% of the card free, just under HEDGE_HEADROOM, so
# it said "may not fit" of nearly every fit it could (Unsloth's own 7 GB GRPO run on an 8 GB
# card, mmseg's 8 GiB OCRNet on an 11 GB one). Over eval/golden.py's 2,707 fit answers, the
# first option carried it in 470 before and 223 after.
HEDGE_MAX_HIGH = 0.5


def engine_share(result: EstimateResult) -> float | None:
    """The share of each card the engine was told to take (vLLM/SGLang work inside the
    share they were given), or None: the whole card."""
    util = result.workload.gpu_memory_utilization
    if util is not None and result.estimate is not None and result.estimate.runtime in SHARE:
        return util
    return None


def need_and_usable(result: EstimateResult, gpu: GpuSpec) -> tuple[int, int]:
    """Bytes needed per card, and bytes of the card the job may use."""
    need = result.estimate.total_bytes if result.estimate else 0  # none: the guide's table
    usable = gpu.usable_vram_bytes
    share = engine_share(result)
    if share is not None:
        usable = int(usable * share)
    return need, usable


def fits_on(result: EstimateResult, gpu: GpuSpec, count: int) -> bool:
    """`option(result, gpu, count, …).fits`, without building the option: the search over
    cards x counts asks this of every pair and keeps one option per card."""
    need, usable = need_and_usable(result, gpu)
    return runs_in(need, usable) and tp_ok(result, count)


class OptionFacts(NamedTuple):
    """What `option` reads of an estimate that is the same on every card."""

    need: int  # bytes per card (none: the guide's table)
    share: float | None  # the engine's share of a card (None: all of it)
    split: str | None  # the split asked, else the one the engine assumed
    tp_by_count: dict[int, bool]  # `tp_ok` by card count, filled as asked
    speed: Any  # speed.speed_facts
    high: int  # the band's high end per card: how far measured setups like this ran


def option_facts(result: EstimateResult) -> OptionFacts:
    """The estimate's `OptionFacts`, kept by estimate (each is judged on every card)."""
    return _option_facts(result)


def _option_facts(result: EstimateResult) -> OptionFacts:
    need = result.estimate.total_bytes if result.estimate else 0  # none: the guide's table
    par = result.workload.parallelism
    assumed = next((a.value for a in result.assumed if a.field == "parallelism"), None)
    split = par.value if par is not None else assumed
    high = result.estimate.decision_high_bytes if result.estimate else 0
    if need and high > need * (1 + HEDGE_MAX_HIGH):
        high = 0  # a level too wide to inform a decision near the limit: no hedge
    return OptionFacts(need, engine_share(result), split, {}, speed_facts(result), high)


# Option facts by estimate (advisor.memo): each estimate is judged on every card.


class Card(NamedTuple):
    """What an option reads of a card, worked out once per card (advisor.memo): the search
    over cards builds a few dozen options per question from the same catalog."""

    gpu: GpuSpec
    usable_bytes: int  # gpu.usable_vram_bytes
    speed: CardSpeed
    # gpu.id and gpu.name, which every option copies: a field read on a pydantic model
    # costs ~60 ns (see the note before `comfortable`), on a NamedTuple a few
    id: str
    name: str


# Per-card rows (advisor.memo): a function of the card and capabilities.toml alone.
_CARDS: ByIdentity[Card] = ByIdentity("card_rows", 512, table=True)


def card_row(gpu: GpuSpec) -> Card:
    return _CARDS.of(
        gpu, lambda: Card(gpu, gpu.usable_vram_bytes, card_speed(gpu), gpu.id, gpu.name)
    )


def option(
    result: EstimateResult,
    gpu: GpuSpec,
    count: int,
    card_price: Price | None,
    speed_always: bool = False,
    blocked: list[str] | None = None,
) -> Option:
    """`count` cards of one GPU for an estimate: fit, headroom, price for all cards, speed.
    `blocked`: the card's missing requirements when the caller already knows them."""
    facts = option_facts(result)
    if blocked is None:
        blocked = blockers(gpu, result)
    price = times(card_price, count)
    return option_from(facts, result, card_row(gpu), count, price, speed_always, blocked)


def _media_speed(
    speed_f: Any, gpu: GpuSpec, count: int, shown: bool
) -> tuple[AudioSpeed | None, ClipTime | None]:
    """An audio job's speed against real time, or how long a video job's clip takes, on
    one card (`speed.speed_facts` of the job); neither beside several cards or where no
    speed is shown."""
    if not shown or count != 1:
        return None, None
    if speed_f.kind == "audio":
        audio = realtime_factor(
            speed_f.model_id, gpu, speed_f.batch, speed_f.runtime, None, speed_f.weight_bytes
        )
        return audio, None
    if speed_f.kind == "video" and speed_f.clip:
        return None, clip_seconds(speed_f.model_id, gpu, speed_f.clip)
    return None, None


def option_from(
    facts: OptionFacts,
    result: EstimateResult,
    card: Card,
    count: int,
    price: Price | None,
    speed_always: bool,
    blocked: list[str],
    row: SpeedRow | None = None,
) -> Option:
    """`option` from the estimate's `option_facts` (the search over cards holds them per
    card count), the card's row, the price of `count` of it (pricing.times) and its missing
    requirements. `row`: `speed_row(facts.speed, card.speed, count)` when the caller has
    it (the search reads a training job's hours before it builds the option)."""
    need, _, split, _, speed_f, high = facts
    speed = card.speed
    usable, headroom, fits = _fit_on(facts, result, card, count)
    tps, total_tps, concurrency, prefill_s, train_hours, images = (
        (row or speed_row(speed_f, speed, count)) if fits or speed_always else NO_SPEED
    )
    audio, clip = _media_speed(speed_f, speed.gpu, count, fits or speed_always)
    job_cost = None
    if train_hours is not None and price is not None:
        job_cost = round(train_hours * price.amount, 2)
    return Option(
        gpu_id=card.id,
        gpu_name=card.name,
        count=count,
        fits=fits,
        risky=fits and headroom < HEADROOM,
        multi_node=count > 8,
        per_gpu_bytes=need,
        usable_bytes=usable,
        headroom_fraction=float(round(headroom, 3)),
        price_per_hour=price,
        parallelism=split if count > 1 else None,
        blocked=blocked,
        decode_tokens_per_s=tps,
        decode_total_tokens_per_s=total_tps,
        concurrency=concurrency,
        prefill_s=prefill_s,
        train_hours=train_hours,
        job_cost=job_cost,
        images_per_min=images,
        audio_realtime_x=audio.realtime_x if audio else None,
        audio_at_least=bool(audio and audio.at_least),
        video_seconds=clip.seconds if clip else None,
        video_from=(clip.source_gpu, clip.source_seconds) if clip else None,
        # near the limit the band's high end is said beside the fit (verdict, picks); a fit
        # with more than half the card free stays ✅ (a 4 GiB job on a 12 GB card was
        # "may not fit" for a band stretched by rare measurements)
        measured_up_to_bytes=high
        if fits and high > usable and headroom <= HEDGE_HEADROOM
        else None,
    )


def _fit_on(
    facts: OptionFacts, result: EstimateResult, card: Card, count: int
) -> tuple[int, float, bool]:
    """Whether the job runs on `count` of the card: the bytes usable of each (the engine's
    share of the card where it takes one), the headroom left of them, and the fit (the
    bytes needed run in them and the model splits over `count` by tensor parallelism, read
    once per count into the facts)."""
    need, usable = facts.need, card.usable_bytes
    if facts.share is not None:
        usable = int(usable * facts.share)
    headroom = 1 - need / usable if usable else -1
    tp = facts.tp_by_count.get(count)
    if tp is None:
        tp = facts.tp_by_count[count] = tp_ok(result, count)
    return usable, headroom, runs_in(need, usable) and tp


def with_cheap_fix(
    opt: Option,
    result: EstimateResult,
    gpu: GpuSpec,
    trials: dict[tuple[int, str], tuple[EstimateResult, list[Requirement] | None]]
    | CheapFixes
    | None = None,
    own: bool = False,
) -> Option:
    """A tight fit that one cheap setting (batch 1, a fused loss, an 8-bit optimizer, an fp8
    KV cache) makes comfortable: kept as a comfortable pick that names the setting.
    `trials`: a `CheapFixes` shared by the cards of one recommendation (or, as before, a
    dict of trial estimates for `fixes_for`). `own`: the caller just built `opt` and shares
    it with no one: the fix is set in place rather than on a copy (the search over cards
    sets one on a third of its options)."""
    if not opt.risky:
        return opt
    if isinstance(trials, CheapFixes):
        first = trials.first(result, gpu, bool(opt.blocked))
        found = [first] if first is not None else []
    else:
        found = fixes_for(
            result, gpu, only_cheap=True, limit=1, trials=trials, blocked=bool(opt.blocked)
        )
    if not found:
        return opt
    code, trial = found[0]
    assert trial.estimate is not None
    if not own:
        opt = replace(opt)
    opt.fix, opt.fixed_bytes = code, trial.estimate.total_bytes
    return opt


def comfortable(o: Option) -> bool:
    return o.fits and not o.blocked and (not o.risky or o.fix is not None)


def price_key(o: Option) -> tuple[bool, float, int]:
    """Listings payable where the reader pays first, then the amount; no price last."""
    p = o.price_per_hour
    if p is None:
        return (True, float("inf"), o.count)
    return (not p.in_region, p.amount, o.count)


def listing_key(o: Option) -> tuple[bool, bool, float, int]:
    """The answer's list of options: comfortable fits first (a tight one with its fix
    counts as comfortable), then by `price_key` (written out: the list of a few dozen
    options is sorted for every answer)."""
    p = o.price_per_hour
    rest = not o.fits or o.risky and not o.fix
    if p is None:
        return (rest, True, float("inf"), o.count)
    return (rest, not p.in_region, p.amount, o.count)


def top_picks(options: list[Option]) -> list[Option]:
    """The options worth a headline: comfortable, NVIDIA (CUDA images just work), one
    machine when one machine will do."""
    picks = [o for o in options if comfortable(o)]
    gpus = catalog.gpus()
    picks = [o for o in picks if gpus[o.gpu_id].vendor == "NVIDIA"] or picks
    return [o for o in picks if not o.multi_node] or picks


def within_budget(
    picks: list[Option], per_hour: float | None, total: float | None
) -> tuple[list[Option], bool]:
    """Budgets are hard filters: a setup with no known price cannot be shown to meet one.
    Returns the picks within budget, or (cheapest priced picks, True) when none is. A job
    with no length (inference) has no job cost to hold against a total budget, so any total
    above zero lets it through; a total of zero is met by no rented card."""
    if per_hour is None and total is None:
        return picks, False
    ok = [
        o
        for o in picks
        if o.price_per_hour is not None
        and (per_hour is None or o.price_per_hour.amount <= per_hour)
        and (total is None or (total > 0 if o.job_cost is None else o.job_cost <= total))
    ]
    if ok:
        return ok, False
    return [o for o in picks if o.price_per_hour is not None], True


def cheapest_of(picks: list[Option]) -> Option | None:
    priced = [o for o in picks if o.price_per_hour is not None]
    return min(priced, key=price_key) if priced else None


def best_value_of(picks: list[Option], result: EstimateResult) -> Option | None:
    """The most for the money among the picks that also hold the band's high end (what
    measured setups like this ran up to) where some do: a card that may not fit is no value
    (a video model at up to 81.8 GiB on an 80 GB card beside a 96 GB one)."""
    held = [o for o in picks if o.price_per_hour is not None and o.measured_up_to_bytes is None]
    picks = held or picks
    priced = [o for o in picks if o.price_per_hour is not None and o.price_per_hour.amount > 0]
    valued = [o for o in priced if o.job_cost is not None]
    if valued:
        return min(valued, key=lambda o: (not o.price_per_hour.in_region, o.job_cost))  # type: ignore[union-attr]
    if priced and result.model.kind == Kind.llm and not result.workload.mode.is_training:
        return max(
            priced,
            key=lambda o: (
                o.price_per_hour.in_region,  # type: ignore[union-attr]
                (o.decode_total_tokens_per_s or 0) / o.price_per_hour.amount,  # type: ignore[union-attr]
            ),
        )
    return cheapest_of(picks)


def fastest_of(picks: list[Option], cheapest: Option | None, fp8: bool = False) -> Option | None:
    """The fastest among setups that make sense for the job: priced, and at most
    FASTEST_PRICE_FACTOR times the cheapest per hour — or, when the whole job's cost is
    known, at most FASTEST_JOB_COST_FACTOR times the lowest job cost (a faster card that
    finishes sooner can cost less in all). `fp8`: the job asks for fp8, so a card without
    fp8 (which runs it upcast, at its 16-bit rate) is never named the fastest."""
    priced = [o for o in picks if o.price_per_hour is not None]
    if fp8:
        priced = [o for o in priced if catalog.gpus()[o.gpu_id].fp8_supported]
    costed = [(o, o.job_cost) for o in priced if o.job_cost is not None]
    if costed:
        cap = min(cost for _, cost in costed) * FASTEST_JOB_COST_FACTOR
        priced = [o for o, cost in costed if cost <= cap]
    elif cheapest is not None and cheapest.price_per_hour is not None:
        cap = cheapest.price_per_hour.amount * FASTEST_PRICE_FACTOR
        priced = [o for o in priced if o.price_per_hour.amount <= cap]  # type: ignore[union-attr]
    priced = [o for o in priced if o.price_per_hour.in_region] or priced  # type: ignore[union-attr]
    if not priced:
        return None
    gpus = catalog.gpus()
    top = max(speed_key(o, gpus[o.gpu_id]) for o in priced)
    # Speeds within FASTEST_TIE of the top are a tie for the model (its link latency alone
    # spans 50-100 us, capabilities.toml [interconnect]): the fewest cards win it, then the
    # quickest (four 16 GB cards over PCIe were named over two cards at 0.3% less).
    near = [o for o in priced if speed_key(o, gpus[o.gpu_id]) >= top * (1 - FASTEST_TIE)]
    return max(near, key=lambda o: (-o.count, speed_key(o, gpus[o.gpu_id])))


def tag(o: Option, cheapest: Option | None, value: Option | None, fastest: Option | None) -> str:
    tags = []
    if o is cheapest:
        tags.append("cheapest")
    if o is value:
        tags.append("best_value")
    if o is fastest:
        tags.append("fastest")
    return ",".join(tags)
