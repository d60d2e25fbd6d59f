"""The search over cards: every rentable card at the fewest cards that run the job, with the
estimate at each card count computed once per answer (memory per card does not depend on
which card) and a cheap fix named where one makes a tight fit comfortable."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.memo import Memo
from advisor.models import EstimateResult, Workload
from advisor.recommend.constraints import applicable, blockers, speed_constants
from advisor.recommend.estimates import estimate
from advisor.recommend.fixes import COUNTS, CheapFixes, workload_for
from advisor.recommend.options import Option, Price
from advisor.recommend.pricing import times_table
from advisor.recommend.rank import (
    Card,
    card_row,
    comfortable,
    engine_share,
    option,
    option_facts,
    option_from,
    tp_ok,
    with_cheap_fix,
)


class Setups:
    """The workload's estimate at each card count (memory per card does not depend on which
    card), computed once per answer."""

    def __init__(self, w: Workload) -> None:
        self.w = w
        self.base = estimate(w)
        self._by_count: dict[int, EstimateResult] = {}
        self._facts: dict[int, tuple[int, float | None, bool]] = {}

    def at(self, count: int) -> EstimateResult:
        if count not in self._by_count:
            trial = workload_for(self.w, count)
            self._by_count[count] = self.base if trial is self.w else estimate(trial)
        return self._by_count[count]

    def fit_facts(self, count: int) -> tuple[int, float | None, bool]:
        """What `fits_on(self.at(count), gpu, count)` reads that is the same on every card:
        the bytes per card, the engine's share of the card (None: all of it) and whether
        tensor parallelism can use `count` cards. The search over cards asks it ~100 times."""
        facts = self._facts.get(count)
        if facts is None:
            result = self.at(count)
            need = result.estimate.total_bytes if result.estimate else 0
            facts = self._facts[count] = (need, engine_share(result), tp_ok(result, count))
        return facts


# The rentable cards in catalog order with their rows (advisor.memo): every answer's
# search walks them.
_RENTABLE: Memo[tuple[Card, ...]] = Memo("rentable_cards", 4, table=True)


def rentable_cards() -> tuple[Card, ...]:
    """The row (rank.card_row) of every card a platform rents (gpus_owned.toml's are judged
    when named only), in catalog order."""
    return _RENTABLE.get(
        catalog.catalog_version(),
        lambda: tuple(card_row(g) for g in catalog.gpus().values() if g.rentable),
    )


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
    trials = CheapFixes()  # the cheap fixes of each estimate, shared by the cards
    excluded: dict[str, list[str]] = {}
    reqs = applicable(setups.base)
    cards = rentable_cards()
    pending: list[tuple[int, Card]] = []  # (catalog place, card)
    for place, card in enumerate(cards):
        # most workloads have no requirement, and then no card misses one
        missing = blockers(card.gpu, setups.base, reqs) if reqs else None
        if missing:
            excluded[card.gpu.id] = missing
        else:
            pending.append((place, card))
    placed: list[Option | None] = [None] * len(cards)  # by catalog place
    limit = speed_constants()["max_job_hours"]  # within_a_week's
    last: tuple[int, float | None] | None = None  # the last count tried: (need, share)
    for count in COUNTS:
        if not pending or (count > ONE_MACHINE and _one_machine_will_do(placed)):
            break
        need, share, tp = setups.fit_facts(count)
        if not tp:
            continue
        result = setups.at(count)
        facts = option_facts(result)
        if facts.split is None and last is not None and need >= last[0] and share == last[1]:
            # Nothing splits the job: each card runs all of it (a diffusion pipeline, data
            # parallel), so no card left fits here or on more cards.
            break
        last = (need, share)
        priced = times_table(prices, count)
        left = []
        for entry in pending:
            card = entry[1]
            card_bytes = card.usable_bytes
            # what `option` (fits_on) would say of fitting, without building it
            if need > (card_bytes if share is None else int(card_bytes * share)):
                left.append(entry)
                continue
            gpu = card.gpu
            opt = option_from(facts, result, card, count, priced[gpu.id], False, [])
            hours = opt.train_hours
            if hours is not None and hours > limit and count < 8:
                opt = within_a_week(setups, gpu, opt, prices[gpu.id])
            if opt.risky:
                # `opt` was built here for this list alone: the fix is set in place
                opt = with_cheap_fix(opt, setups.at(opt.count), gpu, trials, own=True)
            placed[entry[0]] = opt
        pending = left
    return [o for o in placed if o is not None], excluded


# The most cards of one machine (an 8-GPU node): more is a multi-node cluster.
ONE_MACHINE = 8


def _one_machine_will_do(placed: list[Option | None]) -> bool:
    """Some NVIDIA card runs the job comfortably on one machine: `top_picks` then never
    heads an answer with a multi-node setup, so none is searched (16 RTX 4060s listed beside
    two A100s was noise, and each count costs its estimate and its fixes' estimates)."""
    return any(
        o is not None and not o.multi_node and comfortable(o) and _nvidia(o.gpu_id) for o in placed
    )


def _nvidia(gpu_id: str) -> bool:
    return catalog.gpus()[gpu_id].vendor == "NVIDIA"


def within_a_week(setups: Setups, gpu: GpuSpec, opt: Option, price: Price | None) -> Option:
    """A training job longer than `max_job_hours` on the fewest cards: the fewest cards of
    one machine (up to 8) that finish it in time, else 8."""
    limit = speed_constants()["max_job_hours"]
    if opt.train_hours is None or opt.train_hours <= limit or opt.count >= 8:
        return opt
    for count in (c for c in COUNTS if opt.count < c <= 8):
        more = option(setups.at(count), gpu, count, price, blocked=[])
        if not more.fits:
            return opt
        opt = more
        if more.train_hours is not None and more.train_hours <= limit:
            break
    return opt
