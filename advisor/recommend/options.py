"""The shapes of an answer: the verdict, the precision x context grid, the whole
recommendation (its rows, `Price` and `Option`, live in `advisor.types`). Amounts are per
hour for all `count` cards, in `Price.currency`."""

from __future__ import annotations

from pydantic import BaseModel

from advisor.models.result import EstimateResult
from advisor.specs import TaskSpec
from advisor.types import Option, Pitfall


class GridCell(BaseModel):
    format: str
    context_tokens: int
    state: str  # ok | tight | no | unsupported | beyond (longer than the model's context)
    per_gpu_bytes: int | None = None
    # Single-request decode speed, on the first (shortest) context of an inference row that
    # runs: "how fast" is asked per precision ("Q4_K_M ~10 tok/s, Q8_0 ~6 tok/s").
    tokens_per_s: float | None = None
    # runs only with vLLM's lean flags (--enforce-eager, a smaller start-up profile): with its
    # defaults (--gpu-memory-utilization 0.9, CUDA graphs, the profile run) it does not, as
    # the verdict's "out of memory as asked" says; marked apart from a plain ⚠️ tight
    lean: bool = False


class Verdict(BaseModel):
    """The one-line answer about the setup asked about (or the top pick)."""

    state: str  # fits | tight | no_fit | blocked | split (the count cannot split the heads)
    headroom_fraction: float
    fix: str | None = None  # the cheapest change (a fix code), if one was found
    fix_tight: bool = False  # the change makes it fit, but with less than the guide's headroom
    heads: str = ""  # split: "attention heads/KV heads", what the count must divide
    # Fits by the estimate, but the band's high end (how far measured setups like this ran
    # above it, data/band.toml) is over the usable memory: that figure, said beside the
    # verdict ("may not fit"); None when the high end fits too.
    measured_up_to_bytes: int | None = None
    # the changes in the answer's list that run with less than the guide's headroom
    # ("2× RTX 3090 with vLLM's lean flags": runs, tight), said so beside each
    tight_fixes: list[str] = []
    # per card after `fix` (a single change on the same cards); None where not worked out
    fixed_bytes: int | None = None
    # tight only with lazy CUDA module loading (PyTorch 2.1+): per card with that context,
    # and the (eager, lazy) contexts the sentence names; None where the eager one decides
    lazy_context_bytes: int | None = None
    contexts: tuple[int, int] | None = None
    # does not run on the user's one card at any context (context_fit.py): per card at the
    # shortest context tried (`no_context_tokens`; with the lazy CUDA context where that
    # applies, `no_context_lazy`) and the weights' share of it
    no_context_bytes: int | None = None
    no_context_tokens: int | None = None
    no_context_lazy: bool = False
    weights_bytes: int | None = None

    @property
    def word(self) -> str:
        """The verdict in the answers' one vocabulary (`[verdict]` in templates/*/labels.toml):
        fits | fits_with | tight | tight_with | no_fit | split | blocked. The headline agrees
        with the best change: a setup that does not fit as asked but fits after `fix` is
        "fits with <fix>" (or "tight with <fix>" when the change leaves under the guide's
        20%), never "does not fit" above a change that makes it fit."""
        if self.state in ("no_fit", "split") and self.fix:
            return "tight_with" if self.fix_tight else "fits_with"
        return self.state


class OffloadAnswer(BaseModel):
    """Whether to offload, asked: the named card's figures without and with it."""

    answer: str  # yes | tight | no | no_effect
    without_bytes: int  # per card, nothing offloaded
    with_bytes: int  # per card, with the offload asked about
    usable_bytes: int
    headroom_without: float  # the share of the card left free without offload
    with_fits: bool  # the offload alone makes it fit (else the answer's fixes are needed too)


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
    guide_task: TaskSpec | None
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
    # The named card's platform when the answer keeps to it (Apple, AMD: recommend/platform.py)
    platform: str | None = None
    # That hardware cannot run the job: the one pick shown is a rented alternative
    rent_instead: bool = False
    # Other cards the question named as alternatives ("3090或4090"), each judged as the named
    # card would be: its own line in the answer, so no card the user named goes unanswered.
    also: list[AlsoCard] = []
    # "要开offload吗": the figure without offload beside the one with it, and the answer
    # (recommend/offload_question.py); None when whether to offload was not asked
    offload_asked: OffloadAnswer | None = None

    @property
    def speech_tokens(self) -> bool:
        """A TTS model's decode makes speech tokens (codec / semantic tokens of audio), not
        a chat model's text tokens: its speed is worded so (data/models/tts.toml)."""
        from advisor import catalog

        spec = catalog.models().get(self.result.model.id or "")
        return spec is not None and spec.family == "tts"

    @property
    def generate_batch(self) -> bool:
        """The figure's runtime is transformers: several sequences are one generate() batch,
        not concurrent requests (a serving engine's), and are worded so."""
        est = self.result.estimate
        return est is not None and est.runtime == "transformers"
