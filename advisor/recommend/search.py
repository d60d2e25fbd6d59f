"""The search over cards: every rentable card at the fewest cards that run the job, with the
estimate at each card count computed once per answer (memory per card does not depend on
which card) and a cheap fix named where one makes a tight fit comfortable."""

from __future__ import annotations

from bisect import bisect_left

from advisor import catalog
from advisor.constraints import applicable, blockers, speed_constants
from advisor.memo import Memo
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.pitfalls.model import vendor_floor_gb
from advisor.recommend.card_counts import COUNTS, ONE_MACHINE, workload_for
from advisor.recommend.estimates import estimate, trial_estimate
from advisor.recommend.fixes import CheapFixes
from advisor.recommend.headroom import HEADROOM, runs_in
from advisor.recommend.pricing import times, times_table
from advisor.recommend.rank import (
    Card,
    OptionFacts,
    card_row,
    comfortable,
    engine_share,
    option_facts,
    option_from,
    tp_ok,
    with_cheap_fix,
)
from advisor.recommend.speed import speed_row
from advisor.types import Option, Price


class Setups:
    """The workload's estimate at each card count (memory per card does not depend on which
    card), computed once per answer: in full (`at`) where the answer shows it, lean (`fit`)
    where the search over cards only reads its numbers."""

    def __init__(self, w: Workload) -> None:
        self.w = w
        self.base = estimate(w)
        self._by_count: dict[int, EstimateResult] = {}
        self._fit: dict[int, EstimateResult] = {}
        self._facts: dict[int, tuple[int, float | None, bool]] = {}
        # the cheap fixes of each estimate (fixes.CheapFixes), shared by the search over
        # cards and the budget's test of a change (may_meet_budget)
        self.cheap_fixes = CheapFixes()

    def at(self, count: int) -> EstimateResult:
        if count not in self._by_count:
            trial = workload_for(self.w, count)
            self._by_count[count] = self.base if trial is self.w else estimate(trial)
        return self._by_count[count]

    def fit(self, count: int) -> EstimateResult:
        """`at(count)` for the search over cards, which reads its totals, runtime and
        assumptions, never its terms' text: the full estimate when there is one, else a
        lean one (estimates.trial_estimate: the same numbers, a fifth cheaper). Most counts
        searched are never shown (no card fits there, or no pick is there), and only the
        answer's setups are worked out in full. The same object for a count every time, as
        the facts kept by estimate (option_facts, cheap fixes) are kept by identity."""
        result = self._fit.get(count)
        if result is None:
            result = self._by_count.get(count)
            if result is None:
                trial = workload_for(self.w, count)
                result = self.base if trial is self.w else trial_estimate(trial)
            self._fit[count] = result
        return result

    def splits_over(self, count: int) -> bool:
        """Whether the job's split can use `count` cards, read off the two-card estimate
        where there is one (the split the engine assumes is the same on any count past one,
        workload_for): a count tensor parallelism refuses is then skipped without its own
        estimate (3, 5, 6 and 7 cards for most models under vLLM)."""
        if count <= 2:
            return True
        two = self._fit.get(2) or self._by_count.get(2)
        return two is None or tp_ok(two, count)

    def fit_facts(self, count: int) -> tuple[int, float | None, bool]:
        """What `fits_on(self.fit(count), gpu, count)` reads that is the same on every card:
        the bytes per card, the engine's share of the card (None: all of it) and whether
        tensor parallelism can use `count` cards. The search over cards asks it ~100 times."""
        facts = self._facts.get(count)
        if facts is None:
            result = self.fit(count)
            need = result.estimate.total_bytes if result.estimate else 0
            facts = self._facts[count] = (need, engine_share(result), tp_ok(result, count))
        return facts


# The rentable cards in catalog order with their rows (advisor.memo): every answer's
# search walks them.
_RENTABLE: Memo[tuple[Card, ...]] = Memo("rentable_cards", 4, table=True)
# The same cards with their catalog places, by usable bytes, least first (the search's).
_BY_BYTES: Memo[tuple[tuple[Card, ...], tuple[tuple[int, Card], ...]]] = Memo(
    "rentable_by_bytes", 4, table=True
)


def rentable_cards() -> tuple[Card, ...]:
    """The row (rank.card_row) of every card a platform rents (gpus_owned.toml's are judged
    when named only), in catalog order, a merged entry at its smaller memory
    (catalog.rented_gpus)."""
    return _RENTABLE.get(
        catalog.catalog_version(),
        lambda: tuple(card_row(g) for g in catalog.rented_gpus()),
    )


def rentable_by_bytes() -> tuple[tuple[Card, ...], tuple[tuple[int, Card], ...]]:
    """`rentable_cards()`, and each with its catalog place by usable bytes, least first
    (a stable sort: cards of one size in catalog order)."""

    def table() -> tuple[tuple[Card, ...], tuple[tuple[int, Card], ...]]:
        cards = rentable_cards()
        return cards, tuple(sorted(enumerate(cards), key=lambda e: e[1].usable_bytes))

    return _BY_BYTES.get(catalog.catalog_version(), table)


def candidates(
    setups: Setups, prices: dict[str, Price | None]
) -> tuple[list[Option], dict[str, list[str]]]:
    """Every card at the fewest cards that fit, and the cards that cannot run the job.

    Walked count by count (each count's estimate and facts read once, for every card still
    without a fit), each card's option kept in catalog order: the list is the one a walk
    card by card builds (the sort that follows is stable), and a count is estimated only
    when some card does not fit on fewer, as there. Multi-node counts (more than
    `ONE_MACHINE` cards) are tried only when no NVIDIA card runs the job comfortably on one
    machine; a job that nothing splits stops at the first count that does not shrink it."""
    trials = setups.cheap_fixes  # the cheap fixes of each estimate, shared by the cards
    cards, by_bytes = rentable_by_bytes()
    # (catalog place, card) by usable bytes, least first: the cards that fit at a count are
    # those from the first that holds `need` on (bisect), the rest wait for more cards. The
    # order cards are judged in changes nothing: each option is kept at its catalog place.
    pending, excluded = _able_to_run(setups.base, cards, by_bytes)
    sizes = [entry[1].usable_bytes for entry in pending]
    placed: list[Option | None] = [None] * len(cards)  # by catalog place
    limit = speed_constants()["max_job_hours"]  # within_a_week's
    last: tuple[int, float | None] | None = None  # the last count tried: (need, share)
    week = _InAWeek(setups, prices, limit)
    for count in COUNTS:
        if not pending or (count > ONE_MACHINE and _one_machine_will_do(placed)):
            break
        if not setups.splits_over(count):
            continue
        need, share, tp = setups.fit_facts(count)
        if not tp:
            continue
        result = setups.fit(count)
        facts = option_facts(result)
        if facts.split is None and last is not None and need >= last[0] and share == last[1]:
            # Nothing splits the job: each card runs all of it (a diffusion pipeline, data
            # parallel), so no card left fits here or on more cards.
            break
        last = (need, share)
        # what `option` (fits_on) would say of fitting, without building it; the engine's
        # share of a card (int(bytes x share)) keeps the order of the cards' bytes
        first = _first_holding(sizes, need, share)
        priced = times_table(prices, count)
        # a training job's hours on these cards: one past `limit` takes more (within_a_week)
        timed = count < 8 and facts.speed.kind == "train"
        for place, card in pending[first:]:
            price = priced[card.id]
            placed[place] = _card_option(card, count, facts, result, price, timed, week, trials)
        del pending[first:], sizes[first:]
    kept = [o for o in placed if o is not None]
    return _at_vendor_floor(kept, setups.base, cards), excluded


def _card_option(
    card: Card,
    count: int,
    facts: OptionFacts,
    result: EstimateResult,
    price: Price | None,
    timed: bool,
    week: _InAWeek,
    trials: CheapFixes,
) -> Option:
    """A card's option at the fewest of it that fit (`count`, whose facts and estimate the
    walk read): on more of it when a training job there (`timed`) takes longer than a week,
    with the cheap fix of a risky fit set in place."""
    at, row = count, None
    if timed:
        row = speed_row(facts.speed, card.speed, count)
        if row[4] is not None and row[4] > week.limit:
            at = week.count_for(card, count)
    if at == count:
        opt = option_from(facts, result, card, count, price, False, [], row)
    else:
        opt = week.option(card, at)
    if opt.risky:
        # `opt` was built here for this list alone: the fix is set in place
        opt = with_cheap_fix(opt, week.setups.fit(opt.count), card.gpu, trials, own=True)
    return opt


def _at_vendor_floor(
    kept: list[Option], base: EstimateResult, cards: tuple[Card, ...]
) -> list[Option]:
    """The options whose cards hold the total the model's vendor states for this context
    (Qwen2.5-7B-Instruct-1M: 120 GB over all cards at 1M tokens, data/pitfalls.toml
    [vendor_long_context]): a setup under it is not offered, whatever the estimate (2x L20
    and 1x H20, 96 GB, were)."""
    floor = vendor_floor_gb(base)
    if floor is None:
        return kept
    vram = {c.gpu.id: c.gpu.vram_gb for c in cards}
    return [o for o in kept if vram[o.gpu_id] * o.count >= floor]


def _able_to_run(
    base: EstimateResult, cards: tuple[Card, ...], by_bytes: tuple[tuple[int, Card], ...]
) -> tuple[list[tuple[int, Card]], dict[str, list[str]]]:
    """The cards (`by_bytes` entries, in their order) that can run the job, and what each
    other card misses, in catalog order as a walk card by card fills it."""
    reqs = applicable(base)
    if not reqs:  # most workloads have no requirement, and then no card misses one
        return list(by_bytes), {}
    pending: list[tuple[int, Card]] = []
    excluded: dict[str, list[str]] = {}
    for entry in by_bytes:
        missing = blockers(entry[1].gpu, base, reqs)
        if missing:
            excluded[entry[1].gpu.id] = missing
        else:
            pending.append(entry)
    return pending, {c.gpu.id: excluded[c.gpu.id] for c in cards if c.gpu.id in excluded}


def _first_holding(sizes: list[int], need: int, share: float | None) -> int:
    """The place of the first card (by usable bytes, least first) that holds `need`: what
    `option` (fits_on) would say of fitting; the engine's share of a card (int(bytes x
    share)) keeps the order of the cards' bytes."""
    if share is None:
        return bisect_left(sizes, need)
    return next((i for i, b in enumerate(sizes) if need <= int(b * share)), len(sizes))


def may_meet_budget(
    setups: Setups,
    prices: dict[str, Price | None],
    per_hour: float | None,
    total: float | None,
) -> bool:
    """Whether `candidates` could find a pick within the budget. False only when no option
    it builds meets it, so that the search would end over budget: a budget fix's changed
    job is then not searched (most fail, and each search costs its options, their cheap
    fixes and a few estimates).

    Each card the job can run on is walked as the search walks it: placed at the fewest
    cards it fits, moved to more for a job past a week (`_InAWeek`), and that option's
    price, job cost and comfort (headroom, else a cheap fix) are read without building it.
    A card priced over `per_hour` is dropped at once (more cards cost more). The picks'
    other narrowings (NVIDIA, one machine, the week's limit, the stop on one machine or on
    a job nothing splits) read the other options and are left out: they only remove picks."""
    base = setups.base
    reqs = applicable(base)
    pending = [c for c in rentable_cards() if not (reqs and blockers(c.gpu, base, reqs))]
    limit = speed_constants()["max_job_hours"]
    week = _InAWeek(setups, prices, limit)
    for count in COUNTS:
        priced = times_table(prices, count)
        # a card with no price, or over `per_hour` here, is over it on more cards too
        pending = [
            c
            for c in pending
            if (p := priced[c.gpu.id]) is not None and (per_hour is None or p.amount <= per_hour)
        ]
        if not pending:
            return False
        if not setups.splits_over(count):
            continue
        need, share, tp = setups.fit_facts(count)
        if not tp:
            continue
        facts = week.facts(count)[3]
        timed = count < 8 and facts.speed.kind == "train"
        left = []
        for card in pending:
            card_bytes = card.usable_bytes
            if need > (card_bytes if share is None else int(card_bytes * share)):
                left.append(card)
                continue
            at = count
            if timed:
                hours = speed_row(facts.speed, card.speed, count)[4]
                if hours is not None and hours > limit:
                    at = week.count_for(card, count)
            if _a_pick_within(setups, week, card, at, times_table(prices, at), per_hour, total):
                return True
        pending = left
    return False


def _a_pick_within(
    setups: Setups,
    week: _InAWeek,
    card: Card,
    count: int,
    priced: dict[str, Price | None],
    per_hour: float | None,
    total: float | None,
) -> bool:
    """Whether the card's option at `count` (where it fits) is comfortable and within the
    budget: option_from's price, job cost and headroom, with_cheap_fix's fix."""
    price = priced[card.id]
    if price is None or (per_hour is not None and price.amount > per_hour):
        return False
    need, share, _, facts = week.facts(count)
    if total is not None:
        hours = speed_row(facts.speed, card.speed, count)[4]
        if hours is not None and round(hours * price.amount, 2) > total:
            return False
    usable = card.usable_bytes if share is None else int(card.usable_bytes * share)
    if (1 - need / usable if usable else -1) >= HEADROOM:
        return True
    return setups.cheap_fixes.first(setups.fit(count), card.gpu, False) is not None


def _one_machine_will_do(placed: list[Option | None]) -> bool:
    """Some NVIDIA card runs the job comfortably on one machine: `top_picks` then never
    heads an answer with a multi-node setup, so none is searched (16 RTX 4060s listed beside
    two A100s was noise, and each count costs its estimate and its fixes' estimates)."""
    return any(
        o is not None and not o.multi_node and comfortable(o) and _nvidia(o.gpu_id) for o in placed
    )


def _nvidia(gpu_id: str) -> bool:
    return catalog.gpus()[gpu_id].vendor == "NVIDIA"


class _InAWeek:
    """A training job longer than `max_job_hours` on the fewest cards that fit: the fewest
    cards of one machine (up to 8) that finish it in time, else the most of them that fit
    (8 at most). Each count's facts are read once for all the cards of one search, and only
    the option kept is built."""

    def __init__(self, setups: Setups, prices: dict[str, Price | None], limit: float) -> None:
        self.setups = setups
        self.prices = prices
        self.limit = limit
        # count -> (bytes per card, engine share, tensor parallel ok, option facts)
        self._at: dict[int, tuple[int, float | None, bool, OptionFacts]] = {}

    def facts(self, count: int) -> tuple[int, float | None, bool, OptionFacts]:
        at = self._at.get(count)
        if at is None:
            need, share, tp = self.setups.fit_facts(count)
            at = self._at[count] = (need, share, tp, option_facts(self.setups.fit(count)))
        return at

    def count_for(self, card: Card, count: int) -> int:
        """The count for a card whose job on `count` of it (which fit) takes longer than
        the limit: each count up to 8 in turn, stopping at one that does not fit (the one
        before is kept) or one that finishes in time."""
        best = count
        for more in (c for c in COUNTS if count < c <= ONE_MACHINE):
            need, share, tp, facts = self.facts(more)
            usable = card.usable_bytes if share is None else int(card.usable_bytes * share)
            if not (runs_in(need, usable) and tp):  # option_from's `fits`
                return best
            best = more
            hours = speed_row(facts.speed, card.speed, more)[4]
            if hours is not None and hours <= self.limit:
                break
        return best

    def option(self, card: Card, count: int) -> Option:
        """The card's option at `count` (as `option(..., blocked=[])` builds it)."""
        facts = self.facts(count)[3]
        price = times(self.prices[card.id], count)
        return option_from(facts, self.setups.fit(count), card, count, price, False, [])
