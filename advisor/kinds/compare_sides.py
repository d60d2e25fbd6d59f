"""What a side-by-side answer holds: each side (a card at its count, or a model), its
serving plan and a format that fits, the verdict, and the answer itself."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor.kinds.capability import CapabilityRow


class ServeSide(BaseModel):
    """One card's plan for the comparison's load (advisor/serving.py): replicas of
    `cards_per_replica` cards, the speed each user sees and the cost of the tokens."""

    # sequences generating at once: the load asked, else what one engine on the fewest
    # cards runs at the speed target (concurrency_assumed)
    concurrency: int
    concurrency_assumed: bool
    context_tokens: int
    cards_per_replica: int  # --tensor-parallel-size
    replicas: int
    total_cards: int
    max_num_seqs: int
    tokens_per_s_per_user: float
    tokens_per_s_total: float
    meets_target: bool
    price_per_hour: float | None  # all cards
    price_per_million_tokens: float | None  # generated tokens at this load


class FormatChange(BaseModel):
    format: str
    verdict: str
    per_card_bytes: int | None = None
    tokens_per_s: float | None = None


class Side(BaseModel):
    model_name: str | None = None  # two models compared: whose side this is
    gpu_id: str
    gpu_name: str
    count: int
    vram_gb: float  # per card
    bandwidth_gbs: float
    tflops_16bit: float | None
    rent_per_hour: float | None  # all `count` cards, cheapest listing
    buy_price: float | None  # one card, purchase catalog (new, else used)
    buy_used: bool = False
    buy_as: str | None = None  # in yuan: the China SKU priced in its place (RTX 4090 D)
    buy_restricted: bool = False  # in yuan: export-controlled, hard to buy new
    # with a workload
    verdict: str | None = None  # fits | tight | no_fit | blocked | split
    per_card_bytes: int | None = None
    usable_bytes: int | None = None
    headroom_fraction: float | None = None
    # fits by the estimate, but measured setups like this ran up to more than the card holds
    measured_up_to_bytes: int | None = None
    tokens_per_s: float | None = None
    train_hours: float | None = None
    images_per_min: float | None = None
    # the same inference with fp8 weights, on a card with native fp8 where 16-bit was asked
    # (a change offered, not what was asked): its verdict, memory per card and speed
    fp8_verdict: str | None = None
    fp8_per_card_bytes: int | None = None
    fp8_tokens_per_s: float | None = None
    # without one
    runs: list[CapabilityRow] = []
    # a serving comparison ("H100 vs H200 serving llama 70b"): this card's serving plan
    serve: ServeSide | None = None
    # two models, no weight format named, this one too big as asked: the format the answer's
    # cheapest change names ("qwen2.5-14b vs llama3.1-8b on a 4090": 14B in fp8), judged
    fits_as: FormatChange | None = None


class Verdict(BaseModel):
    """The one-line answer to "which one": the side that wins and on what. `basis`:
    less_memory / same_memory (two models on one job), only_fits, none_fits, faster (cards
    that all run the job: the faster, and the cheaper per hour where that is the other),
    cheaper_per_token (a serving comparison: the cost of a million generated tokens)."""

    basis: str
    winner: str | None = None  # the side's label as the header writes it
    loser: str | None = None
    winner_value: float | None = None  # GiB, tok/s or price per 1M tokens, as basis says
    loser_value: float | None = None
    cheaper: str | None = None  # "faster": the other side, where it is cheaper per hour
    faster: str | None = None  # "less_memory": the side with the faster decode, if known
    unit: str | None = None  # "faster": tok/s, h (training hours: fewer wins) or img/min
    # "only_fits" between two models: the other in the format that makes it fit, and its speed
    loser_format: str | None = None
    loser_format_tokens_per_s: float | None = None
    # a question about buying ("买4090还是a6000"): the side whose cards cost less to buy, and
    # what each side's cards cost (its own first), in the answer's currency
    cheaper_to_buy: str | None = None
    buy_totals: tuple[float, float] | None = None


class CompareAnswer(BaseModel):
    currency: str
    model_name: str | None  # the workload compared on, or None (cards alone)
    sides: list[Side]
    models: bool = False  # the sides are two models (on the card named or each one's pick)
    verdict: Verdict | None = None
    # what the comparison took for granted that the question did not say (field, value):
    # the runtime and the weights decide both the memory and the speed compared
    assumed: list[tuple[str, str]] = []

    def public_json(self) -> dict[str, Any]:
        return {
            "compare": {
                "model": self.model_name,
                "currency": self.currency,
                "sides": [
                    s.model_dump(exclude={"runs"}) | {"runs": [r.model_dump() for r in s.runs]}
                    for s in self.sides
                ],
                "verdict": self.verdict.model_dump() if self.verdict else None,
                "assumed": dict(self.assumed),
            }
        }
