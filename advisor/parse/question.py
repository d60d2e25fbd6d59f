"""What kind of question a line asks: `fit` (what a workload needs: today's answers),
`capability` (what a card can run), `purchase` (what to buy for a budget), `serve` (N users),
`train_time` (how long a run takes), `compare` (A or B) or `out_of_scope` (a greeting or a
question outside the trade).

One recognizer reads the cue words (advisor/data/vocab/kinds.toml) into `Reading.cues`;
`decide_kind` weighs them against what the other recognizers read (a budget, cards, a model,
a count of users). The vocabulary is data: a new way of saying "buy" is a line there.
"""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.models.choices import Kind
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan

KINDS = ("fit", "capability", "purchase", "serve", "train_time", "compare", "out_of_scope")

# Detected from the line as typed (a mode word may already have taken "训练" of "训练时间");
# the weak purchase words and greetings from what is left ("llama-server" is a runtime,
# "hi" inside a name is not a greeting).
_FROM_ORIGINAL = (
    "institution",
    "purchase",
    "card_only",
    "rent",
    "compare",
    "capability",
    "train_time",
    "serve",
    "serving",
    "domain",
)


# A budget written in 万 ("预算8万", "老板给了10个w", "5万元"): the scale of a lab's or a
# company's purchase; not "10万条数据" (a count of samples)
_WAN_BUDGET = re.compile(
    r"(?:预算|经费|花|给了|投入|budget)\D{0,6}\d+(?:\.\d+)?\s*(?:个\s*)?(?:万|w(?![a-z]))"
    r"|\d\s*(?:万|w)\s*(?:元|块|rmb|预算)"
)


@cache
def _cue_patterns() -> dict[str, re.Pattern[str]]:
    table = vocab.load("kinds")
    words = {
        "purchase": table["purchase"]["strong"],
        "purchase_weak": table["purchase"]["weak"],
        "card_only": table["purchase"]["card_only"],
        "rent": table["purchase"]["rent"],
        "institution": table["purchase"]["institution"],
        "compare": table["compare"]["words"],
        "capability": table["capability"]["words"],
        "train_time": table["train_time"]["words"],
        "serve": table["serve"]["words"],
        "serving": table["serve"]["intent"],
        "greeting": table["out_of_scope"]["greetings"],
        "domain": table["out_of_scope"]["domain"],
    }
    return {cue: re.compile(vocab.alternation(w)) for cue, w in words.items()}


def buys_hardware(text: str) -> bool:
    """Whether a line speaks of buying hardware (a strong or weak purchase word): the budget
    recognizer then reads a bare "8万" or "$12k" as the budget."""
    cues = _cue_patterns()
    return bool(cues["purchase"].search(text) or cues["purchase_weak"].search(text))


def recognize_question_kind(s: Scan, r: Reading) -> None:
    """Read every cue word; consume those still unread so they are not listed as ignored."""
    original = s.original.lower()
    for cue, pattern in _cue_patterns().items():
        if cue in _FROM_ORIGINAL and pattern.search(original):
            r.cues.add(cue)
        if cue in ("domain", "serving"):
            continue  # read, never consumed: "显存", "model", "vllm" have their own readers
        if s.take_all(pattern) and cue not in _FROM_ORIGINAL:
            r.cues.add(cue)
    if _WAN_BUDGET.search(original):
        r.cues.add("institution")  # "预算8万": bought through an institution's purchasing
    rent, buy = (_cue_patterns()[c].search(original) for c in ("rent", "purchase"))
    if rent and buy and rent.start() < buy.start():
        r.cues.add("rent_first")  # "rent an A100 or buy a 4090": the second card is bought


def _budget_cny(r: Reading) -> float | None:
    if r.budget is None or r.budget.per_hour:
        return None
    if r.budget.currency == "USD":
        return r.budget.amount * catalog.cny_per_usd()
    return r.budget.amount


def _names_something(r: Reading) -> bool:
    return bool(
        r.spec is not None
        or r.params_b is not None
        or r.gpu_id is not None
        or r.vram_gib is not None
        or r.kind is not None
        or r.mode is not None
        or r.budget is not None
        or r.fields
        or r.unrecognized
    )


# Cues that keep a line in the trade even when nothing else of it was read
_IN_TRADE = frozenset({"domain", "serving", "serve", "capability"})


def decide_kind(r: Reading, understood: list[str], unread: bool = False) -> str:
    """The kind of question, from the cues and what the line named. Order matters: a
    purchase plan may name cards and a model; a comparison names two of something.
    `unread`: words were left over that name no card."""
    cues = r.cues
    if unread and not _names_something(r) and not cues & _IN_TRADE:
        # "帮我订一张明天去上海的机票", "给我买一张电影票": a count ("一张") or a buying
        # word and nothing of the trade, the rest unread: outside what the bot answers
        return "out_of_scope"
    total = _budget_cny(r)
    purchase_floor = vocab.load("kinds")["purchase"]["budget_cny_at_least"]
    two_cards = r.gpu_id is not None and bool(r.other_cards)
    # "买4090还是a6000", "which should I buy, A or B": the two cards side by side, each with
    # its price to buy beside the rental one (kinds/compare.py), not a plan of other cards
    if two_cards and ("compare" in cues or "purchase" in cues) and "rent" not in cues:
        return "compare"
    if "purchase" in cues or ("purchase_weak" in cues and total is not None and "rent" not in cues):
        return "purchase"
    if total is not None and total >= purchase_floor and "rent" not in cues:
        return "purchase"
    two_models = any(a.startswith("second_model") for a in r.assumed)
    if "compare" in cues and (two_cards or two_models):
        return "compare"
    data = ("_tokens", "_samples", "_epochs", "_dataset_images")
    if "train_time" in cues and (
        r.mode not in (None, "inference") or any(r.fields.get(k) for k in data)
    ):
        return "train_time"
    # Serving many users is planned for language models (KV cache, tokens/s per user); an
    # image model "for 30 students" is answered as a fit with its batch.
    language = r.kind in (None, Kind.llm) and (r.spec is None or r.spec.kind == Kind.llm)
    if language and ("serve" in cues or (r.fields.get("concurrency") or 0) > 1):
        return "serve"
    has_card = r.gpu_id is not None or r.vram_gib is not None
    no_model = r.spec is None and r.params_b is None
    greeted = "greeting" in cues and not has_card  # "你好，请问你能做什么": asks the bot
    if no_model and (r.ask_fit or "capability" in cues) and (has_card or r.kind is None):
        return "out_of_scope" if greeted and not _names_something(r) else "capability"
    small_talk = not understood or "greeting" in cues
    if small_talk and not _names_something(r) and "domain" not in cues:
        return "out_of_scope"
    return "fit"
