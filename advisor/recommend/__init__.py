"""Which GPU, how many cards, what it costs — for one workload and an optional budget.

The setup the user named (card and count) is judged first: its per-card figure, the split
assumed, a verdict and the cheapest change. Then the alternatives: every card at the fewest
cards that run the job as asked (constraints first), budgets as hard filters, ranked
cheapest per hour, best value (cost to finish the job) and fastest.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from advisor import catalog
from advisor.catalog import GpuSpec, PriceSpec
from advisor.constraints import speed_constants
from advisor.decode_speed import decode_fit
from advisor.memo import Memo, prices_key
from advisor.memory.runtimes import coefficient
from advisor.models import EstimateResult, Runtime, Workload
from advisor.parse import ParsedQuery
from advisor.pitfalls import Pitfall, card_pitfalls, find_pitfalls
from advisor.recommend.card_counts import COUNTS, adds_cards
from advisor.recommend.consumer_route import consumer_card_route
from advisor.recommend.fix_candidates import SLOW, candidate_fixes
from advisor.recommend.free_tiers import free_tiers
from advisor.recommend.grid import precision_grid
from advisor.recommend.guide import guide_task
from advisor.recommend.headroom import HEADROOM, MIN_FREE
from advisor.recommend.options import AlsoCard, GridCell, Recommendation, Verdict
from advisor.recommend.platform import keep_to_platform, platform_fixes, platform_of
from advisor.recommend.pricing import REGION_BY_CURRENCY, cheapest_price
from advisor.recommend.rank import (
    best_value_of,
    cheapest_of,
    fastest_of,
    listing_key,
    option,
    tag,
    top_picks,
    within_budget,
)
from advisor.recommend.recipes import faster_route, small_card_recipe
from advisor.recommend.search import Setups as _Setups  # owned.py reads it here
from advisor.recommend.search import candidates, may_meet_budget
from advisor.recommend.verdict import verdict_of
from advisor.types import Option, Price

# What nvidia-smi reports of a card's memory (gpus.toml: a 12 GB card shows 11.88 GiB).
USABLE_SHARE = 0.99

__all__ = [
    "COUNTS",
    "HEADROOM",
    "GridCell",
    "Option",
    "Price",
    "Recommendation",
    "Verdict",
    "cheapest_price",
    "guide_task",
    "recommend",
    "recommend_query",
    "summary",
]


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


def _worth_a_headline(options: list[Option], base: EstimateResult) -> list[Option]:
    top = top_picks(options)
    limit = speed_constants()["max_job_hours"]
    in_time = [o for o in top if o.train_hours is not None and o.train_hours <= limit]
    if in_time:
        top = in_time  # a job that finishes within a week beats a cheaper month-long one
    if base.estimate is None:
        # No memory formula (rendering, video, simulation): the guide's cards for the job.
        task = guide_task(base)
        top = [o for o in top if task is None or o.gpu_id in task.gpu_ids] or top
    return top


def recommend(
    w: Workload,
    gpu_id: str | None = None,
    budget_per_hour: float | None = None,
    budget_total: float | None = None,
    currency: str | None = None,
    prices_file: Path | None = None,
    gpu_count: int | None = None,
    vram_gib: float | None = None,
    region: str | None = None,
    ask_count: bool = False,
    try_budget_fixes: bool = True,
    use_recipes: bool = True,
    owned: bool = False,
    picks_for: Workload | None = None,
) -> Recommendation:
    """`ask_count`: the user asked how many of the named card ("需要几张 H100") and gave no
    count: the named setup is the fewest of that card that run the job. `use_recipes`: a
    diffusion job that does not fit the named card as loaded by default is answered for the
    low-VRAM recipe people run on it (recipes.py). `owned`: the named card is the user's own
    (they said so, or it has no rental listing): never called over-provisioned.
    `picks_for`: the job the other cards are searched for, when it is not `w` (the named
    card's small-card recipe: a card to rent instead runs the job as asked, without the
    recipe's offload)."""
    prices = catalog.load_prices(prices_file)
    currency = currency or "CNY"
    setups = _Setups(w)
    base = setups.base
    named, named_gpu = None, None
    if gpu_id is not None or vram_gib is not None:
        count = gpu_count or max(w.num_gpus, 1)
        named_gpu = catalog.gpus()[gpu_id] if gpu_id is not None else card_with(vram_gib or 0)
        price = cheapest_price(gpu_id, prices, currency, region) if gpu_id else None
        if ask_count and gpu_count is None:
            count = _fewest(setups, named_gpu, price)
        named = option(setups.at(count), named_gpu, count, price, speed_always=True)
        if (
            gpu_count is None
            and not ask_count
            and _several_on_platform(named, named_gpu, setups.at(count))
        ):
            # "MI300X llama3-405b fp8": no larger card exists on the platform; the answer
            # is the fewest of the named card that run it, said so (count_asked)
            count = _fewest(setups, named_gpu, price)
            named = option(setups.at(count), named_gpu, count, price, speed_always=True)
            ask_count = count > 1
        if use_recipes and (recipe := _small_card_recipe(setups.at(count), named, named_gpu)):
            # The answer is for the recipe people run on this card, said so in the answer.
            rec = recommend(
                recipe[1],
                gpu_id=gpu_id,
                budget_per_hour=budget_per_hour,
                budget_total=budget_total,
                currency=currency,
                prices_file=prices_file,
                gpu_count=count,
                vram_gib=vram_gib,
                region=region,
                try_budget_fixes=try_budget_fixes,
                use_recipes=False,
                owned=owned,
                picks_for=w,
            )
            # where the recipe offloads, a smaller format that needs less offload first
            faster = faster_route(base, recipe[1], named_gpu)
            same = f"quantize:{faster.partition(':')[2]}" if faster else None
            fixes = [faster, *(f for f in rec.fixes if f != same)] if faster else rec.fixes
            verdict = rec.verdict
            if faster and verdict is not None and (verdict.fix or "").partition(":")[0] in SLOW:
                # a smaller format at full speed costs less than streaming weights from RAM
                verdict = verdict.model_copy(update={"fix": faster, "fix_tight": False})
            return rec.model_copy(
                update={"recipe": recipe[0], "asked": base, "fixes": fixes, "verdict": verdict}
            )
        named.notes = card_pitfalls(setups.at(count), named_gpu, named)
    # after the named card: a small-card recipe answers for another workload
    searched = setups if picks_for is None else _Setups(picks_for)
    found = _search(searched, prices_file, currency, region, budget_per_hour, budget_total)
    if found.over_budget and named is None and try_budget_fixes:
        # Before declaring the budget impossible: the cheap changes (a smaller format, a
        # shorter context) on cards within it. The answer is then for the changed job: the
        # first change whose pick keeps the guide's headroom, else the first that fits. Each
        # change is searched, and only the one answered is worked out in full (verdict,
        # pitfalls, free tiers): a change over budget too is read for nothing else.
        tight: tuple[str, _Search] | None = None
        prices_now = card_prices(prices_file, currency, region)
        for code, changed in _budget_fixes(base):
            trial_setups = _Setups(changed)
            if not may_meet_budget(trial_setups, prices_now, budget_per_hour, budget_total):
                continue  # its search would end over budget too
            trial = _search(
                trial_setups, prices_file, currency, region, budget_per_hour, budget_total
            )
            cheapest = None if trial.over_budget else cheapest_of(trial.picks)
            if cheapest is not None:
                if not cheapest.risky:
                    return _fixed(
                        trial, code, base, budget_per_hour, budget_total, currency, region
                    )
                tight = tight or (code, trial)
        if tight is not None:
            return _fixed(tight[1], tight[0], base, budget_per_hour, budget_total, currency, region)
    return _answer(
        found,
        named,
        named_gpu,
        budget_per_hour,
        budget_total,
        currency,
        region,
        count_asked=ask_count and named is not None and gpu_count is None,
        owned=owned,
        own=setups if searched is not setups else None,
    )


class _Search(NamedTuple):
    """The search over cards for one workload, before any pick is worked out in full."""

    setups: _Setups
    options: list[Option]
    excluded: dict[str, list[str]]
    picks: list[Option]  # the headline's candidates within the budget (else all priced)
    over_budget: bool


def _search(
    setups: _Setups,
    prices_file: Path | None,
    currency: str,
    region: str | None,
    budget_per_hour: float | None,
    budget_total: float | None,
) -> _Search:
    options, excluded = candidates(setups, card_prices(prices_file, currency, region))
    picks, over_budget = within_budget(
        _worth_a_headline(options, setups.base), budget_per_hour, budget_total
    )
    return _Search(setups, options, excluded, picks, over_budget)


def _fixed(
    trial: _Search,
    code: str,
    asked: EstimateResult,
    budget_per_hour: float | None,
    budget_total: float | None,
    currency: str,
    region: str | None,
) -> Recommendation:
    """The answer for a budget fix's changed job (`recommend` of it with no card named and
    no budget fixes of its own), said to be for that change."""
    rec = _answer(trial, None, None, budget_per_hour, budget_total, currency, region)
    return rec.model_copy(update={"budget_fix": code, "asked": asked})


def _answer(
    found: _Search,
    named: Option | None,
    named_gpu: GpuSpec | None,
    budget_per_hour: float | None,
    budget_total: float | None,
    currency: str,
    region: str | None,
    count_asked: bool = False,
    owned: bool = False,
    own: _Setups | None = None,
) -> Recommendation:
    """The recommendation from the search: the picks tagged and noted, the headline, its
    verdict and fixes, the answer's pitfalls, free tiers and precision grid. `own`: the
    named card's job where the picks were searched for another (`recommend`'s picks_for)."""
    searched, options, excluded, picks, over_budget = found
    setups = own or searched
    base = setups.base
    w = setups.w
    platform = platform_of(named_gpu) if named is not None else None
    rent_instead = False
    if platform is not None and named is not None and named_gpu is not None:
        # a Mac or an AMD card named: the answer stays on that hardware (platform.py)
        options, picks, rent_instead = keep_to_platform(
            options, picks, named, named_gpu, setups.at(named.count)
        )
    cheapest = cheapest_of(picks)
    best_value = best_value_of(picks, base)
    fp8 = (w.weights_format or "").endswith("fp8") or (w.weights_format or "").startswith("fp8")
    fastest = fastest_of(picks, cheapest, fp8=fp8)
    noted = {id(o): o for o in (cheapest, best_value, fastest) if o is not None}
    for o in noted.values():
        # once per pick (the cheapest is often the best value too): the same tag and notes
        o.why = tag(o, cheapest, best_value, fastest)
        # numbers and assumptions only: the search's estimate at the pick's count will do (the
        # headline's setup, shown below, is worked out in full)
        o.notes = card_pitfalls(searched.fit(o.count), catalog.gpus()[o.gpu_id], o)

    # A budget for the whole job asks what the job costs: the headline is then the pick
    # cheapest in total (best value ranks by job cost), not the one cheapest per hour (a
    # ¥4.98/h card for ¥65 led above a ¥8.88/h one that does the job for ¥37).
    by_job = budget_total is not None and best_value is not None and best_value.job_cost
    headline = named or (best_value if by_job else cheapest) or (picks[0] if picks else None)
    setup = setups.at(headline.count) if headline else base
    # The headline's notes are its card_pitfalls on this setup: the answer's list starts
    # with the same when that setup is the one asked (each costs a few pitfalls to build).
    head_notes = None
    if headline is not None and (headline is named or id(headline) in noted) and setup is base:
        head_notes = headline.notes
    head_gpu = named_gpu or (catalog.gpus()[headline.gpu_id] if headline else None)
    verdict, fixes = verdict_of(
        setup, headline, head_gpu, own_card=named is not None and named.count == 1
    )
    if head_gpu is not None and platform is not None:
        fixes = platform_fixes(fixes, head_gpu)
    if headline is None or not headline.blocked:  # an engine that cannot start takes no share
        setup = _with_engine_share(setup, head_gpu)
    pitfalls = _not_beside(
        find_pitfalls(
            base,
            head_gpu,
            headline,
            cheapest,
            owned=owned and named is not None,
            card_notes=head_notes,
        ),
        headline,
        named,
    )
    pitfalls = _true_of(pitfalls, list(noted.values()))
    pitfalls = _oom_as_asked(pitfalls, verdict)
    if named is None and (route := consumer_card_route(base, cheapest)) is not None:
        pitfalls.append(route)  # beside 80 GB picks: what the 24 GB card lab members own runs
    task = guide_task(
        base,
        headline.per_gpu_bytes if headline and setup.estimate else None,
        headline.count if headline else 1,
    )
    # Built from values of the fields' types, so without validation (tests/test_fast_paths.py
    # compares a validated one); the fields left out keep their defaults and stay unset.
    return Recommendation.model_construct(
        result=base,
        setup=setup,
        options=sorted(options, key=listing_key),
        cheapest=cheapest,
        best_value=best_value,
        fastest=fastest,
        named=named,
        headline=headline,
        verdict=verdict,
        fixes=fixes,
        pitfalls=pitfalls,
        guide_task=task,
        currency=currency,
        region=region or REGION_BY_CURRENCY.get(currency, "global"),
        budget_per_hour=_float(budget_per_hour),
        budget_total=_float(budget_total),
        over_budget=over_budget,
        excluded=excluded,
        free=free_tiers(base),
        grid=precision_grid(w, head_gpu, named.count) if named and head_gpu else [],
        count_asked=count_asked,
        decode_efficiency=_decode_efficiency(base, head_gpu),
        platform=platform,
        rent_instead=rent_instead,
    )


def _decode_efficiency(result: EstimateResult, gpu: GpuSpec | None) -> float:
    """The share of memory bandwidth the answer's runtime reaches in decode on its card
    (advisor/decode_speed.py), for the footnote."""
    if gpu is None or result.estimate is None:
        return 0.0
    runtime = result.estimate.runtime
    return decode_fit(getattr(runtime, "value", runtime), gpu).efficiency


def _float(x: float | None) -> float | None:
    """A budget as validation stores it: a float (the user's "3" is 3.0)."""
    return float(x) if x is not None else None


BUDGET_FIX_KINDS = ("kv_fp8", "shorter_context", "quantize", "lora", "qlora")
BUDGET_FIX_TRIALS = 5


def _budget_fixes(result: EstimateResult) -> list[tuple[str, Workload]]:
    """The cheap changes worth a second search when nothing fits the budget, cheapest first:
    an fp8 KV cache, half the context, a smaller number format, LoRA / QLoRA."""
    out: list[tuple[str, Workload]] = []
    kinds: set[str] = set()
    for code, make in candidate_fixes(result):
        kind = code.partition(":")[0]
        if kind not in BUDGET_FIX_KINDS or (kind == "shorter_context" and kind in kinds):
            continue
        kinds.add(kind)
        out.append((code, make()))
        if len(out) >= BUDGET_FIX_TRIALS:
            break
    return out


def _small_card_recipe(
    setup: EstimateResult, named: Option, gpu: GpuSpec
) -> tuple[str, Workload] | None:
    """The recipe rung for a diffusion job that does not fit the named card with the
    guide's headroom as asked; None when it does, or when the user chose the knobs."""
    if named.blocked or (named.fits and not named.risky) or named.count != 1:
        return None
    usable = gpu.usable_vram_bytes
    return small_card_recipe(setup, gpu, int(usable * (1 - HEADROOM)), int(usable * (1 - MIN_FREE)))


def _several_on_platform(named: Option, gpu: GpuSpec, setup: EstimateResult) -> bool:
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


def _fewest(setups: _Setups, gpu: GpuSpec, price: Price | None) -> int:
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


def _true_of(pitfalls: list[Pitfall], options: list[Option]) -> list[Pitfall]:
    """Without a general claim the answer's own picks (`options`) refute: "a 7B full
    fine-tune does not fit one card" beside a pick "1× B200 ✅ fits" (a DPO
    answer)."""
    if any(o.count == 1 and o.fits and not o.blocked for o in options):
        return [p for p in pitfalls if p.code != "full_finetune_multi_gpu"]
    return pitfalls


def _oom_as_asked(pitfalls: list[Pitfall], verdict: Verdict | None) -> list[Pitfall]:
    """Under a headline that runs it with a change ("runs with --enforce-eager"), the OOM
    is the setup as asked, said so: a bare "will run out of memory" contradicted it."""
    if verdict is None or verdict.fix is None:
        return pitfalls
    return [
        p.model_copy(update={"code": "oom_as_asked", "severity": "warning"})
        if p.code == "oom"
        else p
        for p in pitfalls
    ]


def _not_beside(
    pitfalls: list[Pitfall], headline: Option | None, named: Option | None
) -> list[Pitfall]:
    """The answer's list without what is already said beside the top pick (when the
    headline is a pick, its warnings and catalog note sit under it)."""
    if headline is None or headline is named:
        return pitfalls
    beside = {
        (n.code, tuple(sorted(n.params.items())))
        for n in headline.notes
        if n.severity != "info" or n.code == "export_variant"
    }
    return [p for p in pitfalls if (p.code, tuple(sorted(p.params.items()))) not in beside]


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


def _with_engine_share(setup: EstimateResult, gpu: GpuSpec | None) -> EstimateResult:
    """vLLM/SGLang take gpu_memory_utilization x the card at start (the KV cache fills the
    rest): nvidia-smi shows that share, whatever the model needs."""
    est = setup.estimate
    if est is None or gpu is None or est.runtime not in (Runtime.vllm, Runtime.sglang):
        return setup
    util = setup.workload.gpu_memory_utilization or coefficient(
        est.runtime.value, "gpu_memory_utilization"
    )
    # never under what the job needs: a setup that does not fit the share shows its need
    # (nvidia-smi beside a smaller figure than "VRAM per card" contradicted it)
    share = max(int(util * gpu.usable_vram_bytes), est.total_bytes)
    return replace(setup, estimate=replace(est, nvidia_smi_bytes=share))


# Recommendations by question (advisor.memo): a pure function of the catalog, the question,
# the currency, the price list and the region. Bounded: each holds every option over the
# catalog, ~100 kB (tracemalloc over the generated questions), so 256 stay under ~26 MB.
_RECOMMENDATIONS: Memo[Recommendation] = Memo("recommendation", 256)
# How the line was read, not what it asks: the words understood, ignored and assumed and the
# cue words (ParsedQuery), which only the reply's text shows (advisor.render, whose memo keys
# on them). A button under an answer re-reads the stored canonical line, whose words differ
# from the user's while the question is the same: keyed on these, such a press recomputed
# the whole recommendation (~0.4 ms each with the estimates remembered, in-process).
_HOW_IT_WAS_READ = {"understood", "ignored", "assumed", "cues"}


def recommend_query(
    parsed: ParsedQuery,
    default_currency: str = "CNY",
    prices_file: Path | None = None,
    region: str | None = None,
) -> Recommendation:
    """`recommend` for a parsed one-line query: its named card, count and budget applied. The
    one path from a user's text to an answer, shared by the CLI and the bot. Memoized: the
    result is shared, so change it only through `model_copy`."""
    if parsed.workload is None:
        raise ValueError("recommend_query needs a parsed workload")
    key = (
        catalog.catalog_version(),
        prices_key(prices_file),
        # every field of the question, not only those read today: a field the recommendation
        # comes to read (an owned card, say) can never be left out of the key
        parsed.model_dump_json(exclude=_HOW_IT_WAS_READ),
        default_currency,
        region,
    )
    return _RECOMMENDATIONS.get(
        key, lambda: _recommend_query(parsed, default_currency, prices_file, region)
    )


def _recommend_query(
    parsed: ParsedQuery, default_currency: str, prices_file: Path | None, region: str | None
) -> Recommendation:
    if parsed.workload is None:
        raise ValueError("recommend_query needs a parsed workload")
    b = parsed.budget
    rec = recommend(
        parsed.workload,
        gpu_id=parsed.gpu_id,
        budget_per_hour=b.amount if b and b.per_hour else None,
        budget_total=b.amount if b and not b.per_hour else None,
        currency=b.currency if b else default_currency,
        prices_file=prices_file,
        gpu_count=parsed.gpu_count if parsed.gpu_id or parsed.vram_gib else None,
        vram_gib=parsed.vram_gib if parsed.gpu_id is None else None,
        region=region,
        ask_count=parsed.ask_count,
        owned=parsed.owns_card or _unlisted(parsed.gpu_id, prices_file),
    )
    if parsed.other_cards:
        rec.also = _also(parsed, default_currency, prices_file, region)
    return rec


def _also(
    parsed: ParsedQuery, default_currency: str, prices_file: Path | None, region: str | None
) -> list[AlsoCard]:
    """Each other card named ("3090或4090") judged as the named card: the same question with
    that card (its own count if one was written, else the first card's)."""
    out = []
    for gpu_id, count in parsed.other_cards:
        one = parsed.model_copy(
            update={"gpu_id": gpu_id, "gpu_count": count or parsed.gpu_count, "other_cards": []}
        )
        rec = recommend_query(one, default_currency, prices_file, region)
        if rec.named is not None and rec.verdict is not None:
            out.append(AlsoCard(option=rec.named, verdict=rec.verdict))
    return out


def _unlisted(gpu_id: str | None, prices_file: Path | None) -> bool:
    """A named card no platform rents (gpus_owned.toml): the user owns it."""
    if gpu_id is None:
        return False
    return not any(p.gpu_id == gpu_id for p in catalog.load_prices(prices_file))


def summary(rec: Recommendation) -> dict:
    """A few fields to store with a question (history, /stats)."""
    pick = rec.headline
    est = rec.result.estimate
    return {
        "model": rec.result.model.id or rec.result.model.name,
        "gpu": pick.gpu_id if pick else None,
        "count": pick.count if pick else None,
        "fits": pick.fits if pick else None,
        "total_bytes": est.total_bytes if est else None,
    }
