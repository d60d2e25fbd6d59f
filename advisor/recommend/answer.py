"""The recommendation worked out from a search over cards: the picks tagged and noted, the
headline, its verdict and fixes, the answer's pitfalls, free tiers and precision grid."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.constraints import speed_constants
from advisor.decode_speed import decode_fit
from advisor.memory.runtimes import coefficient, lmdeploy
from advisor.models.choices import Runtime
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.pitfalls import Pitfall, card_pitfalls, find_pitfalls
from advisor.recommend.consumer_route import consumer_card_route
from advisor.recommend.free_tiers import free_tiers
from advisor.recommend.grid import precision_grid
from advisor.recommend.guide import guide_task
from advisor.recommend.official_script import official_script_note
from advisor.recommend.options import Recommendation, Verdict
from advisor.recommend.platform import keep_to_platform, platform_fixes, platform_of
from advisor.recommend.pricing import REGION_BY_CURRENCY, card_prices
from advisor.recommend.rank import (
    best_value_of,
    cheapest_of,
    fastest_of,
    listing_key,
    tag,
    top_picks,
    within_budget,
)
from advisor.recommend.search import Setups, candidates
from advisor.recommend.verdict import verdict_of, without_more_cards
from advisor.types import Option


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


class Search(NamedTuple):
    """The search over cards for one workload, before any pick is worked out in full."""

    setups: Setups
    options: list[Option]
    excluded: dict[str, list[str]]
    picks: list[Option]  # the headline's candidates within the budget (else all priced)
    over_budget: bool


def search_cards(
    setups: Setups,
    prices_file: Path | None,
    currency: str,
    region: str | None,
    budget_per_hour: float | None,
    budget_total: float | None,
) -> Search:
    options, excluded = candidates(setups, card_prices(prices_file, currency, region))
    picks, over_budget = within_budget(
        _worth_a_headline(options, setups.base), budget_per_hour, budget_total
    )
    return Search(setups, options, excluded, picks, over_budget)


def fixed_answer(
    trial: Search,
    code: str,
    asked: EstimateResult,
    budget_per_hour: float | None,
    budget_total: float | None,
    currency: str,
    region: str | None,
) -> Recommendation:
    """The answer for a budget fix's changed job (`recommend` of it with no card named and
    no budget fixes of its own), said to be for that change."""
    rec = answer(trial, None, None, budget_per_hour, budget_total, currency, region)
    return rec.model_copy(update={"budget_fix": code, "asked": asked})


def _on_platform(
    options: list[Option],
    picks: list[Option],
    named: Option | None,
    named_gpu: GpuSpec | None,
    setups: Setups,
) -> tuple[str | None, list[Option], list[Option], bool]:
    """The named card's platform (a Mac, an AMD card; None for CUDA), and the options and
    picks kept to it, with whether renting a card instead is said: on such hardware the
    answer stays on it (platform.py)."""
    platform = platform_of(named_gpu) if named is not None else None
    rent_instead = False
    if platform is not None and named is not None and named_gpu is not None:
        options, picks, rent_instead = keep_to_platform(
            options, picks, named, named_gpu, setups.at(named.count)
        )
    return platform, options, picks, rent_instead


def _head_notes(
    headline: Option | None, named: Option | None, noted: dict[int, Option], asked: bool
) -> list[Pitfall] | None:
    """The headline's notes are its card_pitfalls on its setup: the answer's list starts
    with the same when that setup is the one asked (each costs a few pitfalls to build)."""
    if headline is not None and (headline is named or id(headline) in noted) and asked:
        return headline.notes
    return None


def _headline(
    named: Option | None,
    cheapest: Option | None,
    best_value: Option | None,
    picks: list[Option],
    budget_total: float | None,
) -> Option | None:
    """The option the answer leads with: the named card, else the cheapest pick. A budget
    for the whole job asks what the job costs: the headline is then the pick cheapest in
    total (best value ranks by job cost), not the one cheapest per hour (a ¥4.98/h card for
    ¥65 led above a ¥8.88/h one that does the job for ¥37)."""
    by_job = budget_total is not None and best_value is not None and best_value.job_cost
    return named or (best_value if by_job else cheapest) or (picks[0] if picks else None)


def _headline_verdict(
    setup: EstimateResult,
    headline: Option | None,
    head_gpu: GpuSpec | None,
    named: Option | None,
    platform: str | None,
    owned: bool,
) -> tuple[Verdict | None, list[str]]:
    """The headline's verdict and fixes: on a Mac or an AMD card only the fixes its
    platform runs; on the user's own cards no more cards."""
    verdict, fixes = verdict_of(
        setup, headline, head_gpu, own_card=named is not None and named.count == 1
    )
    if head_gpu is not None and platform is not None:
        fixes = platform_fixes(fixes, head_gpu)
    if owned and named is not None and platform is None:
        verdict, fixes = without_more_cards(verdict, fixes, setup)
    return verdict, fixes


def answer(
    found: Search,
    named: Option | None,
    named_gpu: GpuSpec | None,
    budget_per_hour: float | None,
    budget_total: float | None,
    currency: str,
    region: str | None,
    count_asked: bool = False,
    owned: bool = False,
    own: Setups | None = None,
) -> Recommendation:
    """The recommendation from the search: the picks tagged and noted, the headline, its
    verdict and fixes, the answer's pitfalls, free tiers and precision grid. `own`: the
    named card's job where the picks were searched for another (`recommend`'s picks_for)."""
    searched, options, excluded, picks, over_budget = found
    setups = own or searched
    base = setups.base
    w = setups.w
    platform, options, picks, rent_instead = _on_platform(options, picks, named, named_gpu, setups)
    cheapest, best_value, fastest, noted = _noted_picks(searched, picks, base, w)
    headline = _headline(named, cheapest, best_value, picks, budget_total)
    setup = setups.at(headline.count) if headline else base
    head_notes = _head_notes(headline, named, noted, setup is base)
    head_gpu = named_gpu or (catalog.gpus()[headline.gpu_id] if headline else None)
    verdict, fixes = _headline_verdict(setup, headline, head_gpu, named, platform, owned)
    if headline is None or not headline.blocked:  # an engine that cannot start takes no share
        setup = _with_engine_share(setup, head_gpu)
    pitfalls = _answer_pitfalls(
        base, head_gpu, headline, cheapest, named, list(noted.values()), verdict, owned, head_notes
    )
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


def _noted_picks(
    searched: Setups, picks: list[Option], base: EstimateResult, w: Workload
) -> tuple[Option | None, Option | None, Option | None, dict[int, Option]]:
    """The cheapest, best-value and fastest picks, each tagged and noted once (by id: the
    cheapest is often the best value too)."""
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
    return cheapest, best_value, fastest, noted


def _answer_pitfalls(
    base: EstimateResult,
    head_gpu: GpuSpec | None,
    headline: Option | None,
    cheapest: Option | None,
    named: Option | None,
    noted: list[Option],
    verdict: Verdict | None,
    owned: bool,
    head_notes: list[Pitfall] | None,
) -> list[Pitfall]:
    """The answer's pitfalls: none already said beside the top pick, none a pick refutes,
    an OOM under a headline that runs with a change said of the setup as asked, and the
    24 GB card route beside large picks."""
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
    pitfalls = _true_of(pitfalls, noted)
    pitfalls = _oom_as_asked(pitfalls, verdict)
    if named is None and (route := consumer_card_route(base, cheapest)) is not None:
        pitfalls.append(route)  # beside 80 GB picks: what the 24 GB card lab members own runs
    if (script := official_script_note(base, head_gpu if named is not None else None)) is not None:
        pitfalls.append(script)  # the authors' own script, when no program was named
    return pitfalls


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


def _true_of(pitfalls: list[Pitfall], options: list[Option]) -> list[Pitfall]:
    """Without a general claim the answer's own picks (`options`) refute: "a 7B full
    fine-tune does not fit one card" beside a pick "1× B200 ✅ fits" (a DPO
    answer)."""
    if any(o.count == 1 and o.fits and not o.blocked for o in options):
        return [p for p in pitfalls if p.code != "full_finetune_multi_gpu"]
    return pitfalls


def _oom_as_asked(pitfalls: list[Pitfall], verdict: Verdict | None) -> list[Pitfall]:
    """Under a headline that runs it with a change ("runs with --enforce-eager"), the OOM
    is the setup as asked, said so: a bare "will run out of memory" contradicted it. Under
    "tight, only with a recent PyTorch" the OOM is an older PyTorch's (eager CUDA context)."""
    if verdict is not None and verdict.lazy_context_bytes is not None:
        return [
            p.model_copy(update={"code": "oom_eager_context", "severity": "warning"})
            if p.code == "oom"
            else p
            for p in pitfalls
        ]
    if verdict is None or verdict.fix is None:
        return pitfalls
    if verdict.state == "blocked" and verdict.fix.startswith("llamacpp:"):
        # the figure is the serving engine's, which cannot run on the card: neither its OOM
        # nor its share of the card at start is said
        return [
            p
            for p in pitfalls
            if p.code not in ("oom", "vllm_preallocates", "lmdeploy_preallocates")
        ]
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


def _with_engine_share(setup: EstimateResult, gpu: GpuSpec | None) -> EstimateResult:
    """vLLM/SGLang take gpu_memory_utilization x the card at start (the KV cache fills the
    rest), LMDeploy --cache-max-entry-count of what the weights left free: nvidia-smi shows
    that share, whatever the model needs."""
    est = setup.estimate
    if est is not None and gpu is not None and est.runtime == Runtime.lmdeploy:
        ratio = lmdeploy.cache_share(setup.workload)
        share = lmdeploy.share_bytes(est, gpu.usable_vram_bytes, ratio)
        return replace(setup, estimate=replace(est, nvidia_smi_bytes=share))
    if est is None or gpu is None or est.runtime not in (Runtime.vllm, Runtime.sglang):
        return setup
    util = setup.workload.gpu_memory_utilization or coefficient(
        est.runtime.value, "gpu_memory_utilization"
    )
    # never under what the job needs: a setup that does not fit the share shows its need
    # (nvidia-smi beside a smaller figure than "VRAM per card" contradicted it)
    share = max(int(util * gpu.usable_vram_bytes), est.total_bytes)
    return replace(setup, estimate=replace(est, nvidia_smi_bytes=share))
