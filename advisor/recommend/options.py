"""The shapes of an answer: a price, one candidate setup (card x count), the whole
recommendation. Amounts are per hour for all `count` cards, in `Price.currency`.

`Price` and `Option` are the search's rows: a new question builds ~40 options and its ranking
reads their fields ~700 times. They are slotted dataclasses, which pydantic validates and
dumps inside `Recommendation` as it does a model (the same JSON), built from values of the
right types by the engine alone. A pydantic model defines `__getattr__` (private attributes,
extra fields), and CPython then cannot specialize an attribute read on it: each read cost
~45 ns against ~8 on a slotted object. As models they were 12% of a new question's
instructions (bench/instructions.py: 5.56 -> 4.89 M)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from advisor import catalog
from advisor.models import EstimateResult
from advisor.pitfalls import Pitfall


@dataclass(slots=True)
class Price:
    amount: float
    currency: str
    platform: str
    source_date: str | None
    # Set when the listing was in another currency: what the platform actually charges.
    listed_amount: float | None = None
    listed_currency: str | None = None
    cny_per_usd: float | None = None  # the rate used, shown with a conversion
    in_region: bool = True  # payable where the reply's reader pays (China for zh)

    @property
    def converted(self) -> bool:
        return self.listed_currency is not None


@dataclass(slots=True)
class Option:
    gpu_id: str
    gpu_name: str
    count: int
    fits: bool
    risky: bool  # fits, but with less than 20% headroom
    multi_node: bool
    per_gpu_bytes: int
    usable_bytes: int
    headroom_fraction: float
    price_per_hour: Price | None  # for all `count` cards
    parallelism: str | None = None  # how the work is split over `count` cards
    blocked: list[str] = field(default_factory=list)  # requirement codes the card misses
    fix: str | None = None  # a cheap change that makes it fit with headroom (fixes.py)
    fixed_bytes: int | None = None  # per-card figure after `fix`
    notes: list[Pitfall] = field(default_factory=list)  # pitfalls shown beside this pick
    decode_tokens_per_s: float | None = None  # one request
    decode_total_tokens_per_s: float | None = None  # all `concurrency` requests together
    concurrency: int = 1
    prefill_s: float | None = None
    train_hours: float | None = None
    job_cost: float | None = None
    images_per_min: float | None = None
    why: str = ""


class GridCell(BaseModel):
    format: str
    context_tokens: int
    state: str  # ok | tight | no | unsupported | beyond (longer than the model's context)
    per_gpu_bytes: int | None = None


class Verdict(BaseModel):
    """The one-line answer about the setup asked about (or the top pick)."""

    state: str  # fits | tight | no_fit | blocked | split (the count cannot split the heads)
    headroom_fraction: float
    fix: str | None = None  # the cheapest change (a fix code), if one was found
    fix_tight: bool = False  # the change makes it fit, but with less than the guide's headroom
    heads: str = ""  # split: "attention heads/KV heads", what the count must divide


class AlsoCard(BaseModel):
    """A card named beside the first ("a100 vs h100"): its setup and one-line verdict."""

    option: Option
    verdict: Verdict


class Recommendation(BaseModel):
    result: EstimateResult  # the workload as asked (the user's card count)
    setup: EstimateResult | None = None  # the headline setup's estimate (per card)
    options: list[Option]  # every runnable candidate that fits, ranked
    cheapest: Option | None
    best_value: Option | None
    fastest: Option | None
    named: Option | None  # the card the user named (at the user's count), fits or not
    headline: Option | None = None  # named, else the top pick
    verdict: Verdict | None = None
    fixes: list[str]  # for the headline setup when it is tight or does not fit
    pitfalls: list[Pitfall]
    guide_task: catalog.TaskSpec | None
    currency: str = "CNY"
    region: str = "china"  # whose platforms come first: china | global | all
    budget_per_hour: float | None = None
    budget_total: float | None = None
    over_budget: bool = False  # nothing that fits is within the budget: cheapest shown
    excluded: dict[str, list[str]] = {}  # gpu id -> requirement codes it misses
    free: list[dict[str, str | int]] = []  # free tiers the job fits (platforms.toml)
    grid: list[GridCell] = []  # the named card: precision x context
    budget_fix: str | None = None  # nothing ran as asked within the budget; this change does
    asked: EstimateResult | None = (
        None  # the job as asked, when `budget_fix` or `recipe` changed it
    )
    recipe: str | None = None  # the small-card recipe (fix code) the answer is for (recipes.py)
    count_asked: bool = False  # "需要几张 H100": `named` is the fewest of that card that run it
    decode_efficiency: float = 0.0  # share of memory bandwidth a decode step is assumed to reach
    # Other cards the question named as alternatives ("3090或4090"), each judged as the named
    # card would be: its own line in the answer, so no card the user named goes unanswered.
    also: list[AlsoCard] = []

    @property
    def generate_batch(self) -> bool:
        """The figure's runtime is transformers: several sequences are one generate() batch,
        not concurrent requests (a serving engine's), and are worded so."""
        est = self.result.estimate
        return est is not None and est.runtime == "transformers"
