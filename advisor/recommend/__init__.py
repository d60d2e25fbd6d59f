"""Which GPU, how many cards, what it costs — for one workload and an optional budget.

The setup the user named (card and count) is judged first: its per-card figure, the split
assumed, a verdict and the cheapest change. Then the alternatives: every card at the fewest
cards that run the job as asked (constraints first), budgets as hard filters, ranked
cheapest per hour, best value (cost to finish the job) and fastest.
"""

from __future__ import annotations

from pathlib import Path

from advisor import catalog
from advisor.memo import Memo, prices_key
from advisor.models.workload import Workload
from advisor.parse import ParsedQuery
from advisor.pitfalls import card_pitfalls
from advisor.recommend.answer import answer, search_cards
from advisor.recommend.budget_fixes import answer_with_budget_fix
from advisor.recommend.card_counts import COUNTS
from advisor.recommend.guide import guide_task
from advisor.recommend.headroom import HEADROOM
from advisor.recommend.named_card import card_with, for_recipe, named_option, recipe_for_named
from advisor.recommend.offload_question import answer_offload_question
from advisor.recommend.options import AlsoCard, GridCell, Recommendation, Verdict
from advisor.recommend.pricing import cheapest_price
from advisor.recommend.search import Setups
from advisor.types import Option, Price

__all__ = [
    "COUNTS",
    "HEADROOM",
    "GridCell",
    "Option",
    "Price",
    "Recommendation",
    "Verdict",
    "card_with",
    "cheapest_price",
    "guide_task",
    "recommend",
    "recommend_query",
    "summary",
]


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
    setups = Setups(w)
    base = setups.base
    named, named_gpu = None, None
    if gpu_id is not None or vram_gib is not None:
        count = gpu_count or max(w.num_gpus, 1)
        named_gpu = catalog.gpus()[gpu_id] if gpu_id is not None else card_with(vram_gib or 0)
        price = cheapest_price(gpu_id, prices, currency, region) if gpu_id else None
        named, count, ask_count = named_option(
            setups, named_gpu, price, count, counted=gpu_count is not None, ask_count=ask_count
        )
        if use_recipes and (recipe := recipe_for_named(setups.at(count), named, named_gpu)):
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
            return for_recipe(rec, recipe, base, named_gpu)
        named.notes = card_pitfalls(setups.at(count), named_gpu, named)
    # after the named card: a small-card recipe answers for another workload
    searched = setups if picks_for is None else Setups(picks_for)
    found = search_cards(searched, prices_file, currency, region, budget_per_hour, budget_total)
    if found.over_budget and named is None and try_budget_fixes:
        fixed = answer_with_budget_fix(
            base, prices_file, currency, region, budget_per_hour, budget_total
        )
        if fixed is not None:
            return fixed
    return answer(
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
    if parsed.ask_offload:
        rec = answer_offload_question(
            parsed, rec, lambda p: recommend_query(p, default_currency, prices_file, region)
        )
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
