"""The machines a lab owns, judged before anything is rented: which machine runs the job,
on how many of its cards, the per-card figure, and what to change when none does.

Each machine goes through the same path as "the user's own card" in `recommend` (the
estimate at each card count, `option`, `verdict_of` with own_card=True), counting only up to
the cards the machine has. Choosing among machines that run the job: the least memory tied
up (cards × card memory), so the big node stays free for the jobs only it can run; then the
internal price; then the name.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel

from advisor import catalog
from advisor.constraints import applicable, blockers
from advisor.models.workload import Workload
from advisor.pitfalls import card_pitfalls
from advisor.recommend.card_counts import COUNTS, adds_cards
from advisor.recommend.options import Verdict
from advisor.recommend.rank import option
from advisor.recommend.search import Setups
from advisor.recommend.verdict import verdict_of
from advisor.types import Option

MAX_CARDS_PER_MACHINE = 64  # the migration's CHECK; a machine past that is a cluster

_STATE_ORDER = {"fits": 0, "tight": 1, "split": 2, "no_fit": 2, "blocked": 3}


class Machine(BaseModel):
    """One registered machine: `count` cards of `gpu_id`, an optional internal price per
    card-hour (in `currency`) and a note."""

    id: int | None = None
    name: str
    gpu_id: str
    count: int
    price_per_card_hour: float | None = None
    currency: str | None = None
    note: str | None = None


class MachineFit(BaseModel):
    machine: Machine
    gpu_name: str
    cards: int  # cards of this machine to use (fewest that run it), or all when none do
    option: Option
    verdict: Verdict
    fixes: list[str]  # changes that make it run on this machine's cards, cheapest first
    cost_per_hour: float | None = None  # cards × internal price, in machine.currency

    @property
    def runs(self) -> bool:
        return self.verdict.state in ("fits", "tight")


class OwnedAnswer(BaseModel):
    machines: list[MachineFit]  # every machine, the one to use first
    best: MachineFit | None  # the machine to use; None when none runs the job as asked


def _counts_up_to(n: int) -> list[int]:
    return [c for c in COUNTS if c < n] + [n]


def _judge(setups: Setups, m: Machine, reqs: list, seen: dict) -> MachineFit | None:
    """`seen`: machines already judged in this answer, by (card, count): a lab's identical
    workstations are judged once."""
    key = (m.gpu_id, m.count)
    if key in seen:
        first = seen[key]
        if first is None:
            return None
        return first.model_copy(update={"machine": m, "cost_per_hour": _cost(m, first.cards)})
    seen[key] = fit = _judge_one(setups, m, reqs)
    return fit


def _cost(m: Machine, cards: int) -> float | None:
    return round(m.price_per_card_hour * cards, 2) if m.price_per_card_hour is not None else None


def _judge_one(setups: Setups, m: Machine, reqs: list) -> MachineFit | None:
    gpu = catalog.gpus().get(m.gpu_id)
    if gpu is None:  # a card the catalog dropped since it was registered
        return None
    missing = blockers(gpu, setups.base, reqs)
    chosen: Option | None = None
    for count in _counts_up_to(m.count):
        o = option(setups.at(count), gpu, count, None, speed_always=True, blocked=missing)
        if o.fits and not o.risky and not missing:
            chosen = o
            break
        if o.fits and chosen is None:
            chosen = o  # fits tight: kept unless more cards give the guide's headroom
    if chosen is None:
        chosen = option(setups.at(m.count), gpu, m.count, None, speed_always=True, blocked=missing)
    if missing:  # what stops the card, to say beside "cannot run it" (as the answer does)
        notes = card_pitfalls(setups.at(chosen.count), gpu, chosen)
        chosen = replace(chosen, notes=[n for n in notes if n.severity == "error"])
    verdict, fixes = verdict_of(setups.at(chosen.count), chosen, gpu, own_card=True)
    if verdict is None:
        return None
    # more cards than the machine has is renting: the rentals below the lab section say it
    fixes = [f for f in fixes if not adds_cards(f)]
    if verdict.fix is not None and adds_cards(verdict.fix):
        verdict = verdict.model_copy(update={"fix": fixes[0] if fixes else None})
    cost = _cost(m, chosen.count)
    return MachineFit(
        machine=m,
        gpu_name=gpu.name,
        cards=chosen.count,
        option=chosen,
        verdict=verdict,
        fixes=fixes,
        cost_per_hour=cost,
    )


def judge_machines(w: Workload, machines: list[Machine]) -> OwnedAnswer | None:
    """Every machine judged for the workload, the one to use first. None when the job has
    no memory formula (rendering, video: the guide's table applies, not a per-card figure)
    or no machine's card is in the catalog. The result is shared: do not change it."""
    return _judge_machines(w, machines)


def _judge_machines(w: Workload, machines: list[Machine]) -> OwnedAnswer | None:
    setups = Setups(w)
    if setups.base.estimate is None or not machines:
        return None
    reqs = applicable(setups.base)
    seen: dict = {}
    fits = [f for m in machines if (f := _judge(setups, m, reqs, seen)) is not None]
    if not fits:
        return None
    fits.sort(
        key=lambda f: (
            _STATE_ORDER[f.verdict.state],
            f.cards * f.option.usable_bytes if f.runs else -f.option.usable_bytes * f.cards,
            f.cost_per_hour if f.cost_per_hour is not None else float("inf"),
            f.machine.name,
        )
    )
    best = fits[0] if fits[0].runs else None
    return OwnedAnswer(machines=fits, best=best)
