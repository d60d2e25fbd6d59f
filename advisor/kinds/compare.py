"""A vs B: "4090还是3090", "A6000 vs 2× 3090 跑 qwen2.5-14b", "a100 vs h100 for llama 70b".

Side by side for the same workload: with a model named, each card (at its count) as the
answer judges it (advisor.recommend: the named card and the alternatives named beside it,
each with its verdict, memory per card, speed and rental price); without one, what each
card runs (capability rows, advisor/fit.py), its bandwidth and 16-bit compute. Both with
the rental price (prices.toml) and, where the purchase catalog has it, the price to buy.
Two models ("qwen vs llama 14b", "qwen2.5-7b vs llama3-8b 4090"): the same job for each,
on the card named (or each one's top pick), side by side.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.fit import card_fit
from advisor.kinds.capability import CapabilityRow, capability_rows
from advisor.kinds.purchase_costs import buy_price
from advisor.parse import ParsedQuery
from advisor.recommend import cheapest_price, recommend_query
from advisor.recommend.card_counts import COUNTS
from advisor.serving import ServeOption, plan_serving, smallest_replica


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


def compares_cards(parsed: ParsedQuery) -> bool:
    """Two cards or more are named."""
    return parsed.gpu_id is not None and bool(parsed.other_cards)


def second_model(parsed: ParsedQuery) -> catalog.ModelSpec | None:
    """The model named beside the first ("A vs B": parse.assemble notes it)."""
    for note in parsed.assumed:
        if note.startswith("second_model = "):
            name = note.removeprefix("second_model = ")
            return next((m for m in catalog.models().values() if m.name == name), None)
    return None


def compares(parsed: ParsedQuery) -> bool:
    """What this module answers: two cards, or two models on one workload."""
    return compares_cards(parsed) or (parsed.ok and second_model(parsed) is not None)


def _side_of(rec: object, option: object, verdict: object, currency: str, model: str) -> Side:
    return Side(
        **_base(option.gpu_id, option.count, currency),  # type: ignore[attr-defined]
        model_name=model,
        verdict=verdict.state if verdict is not None else None,  # type: ignore[attr-defined]
        per_card_bytes=option.per_gpu_bytes,  # type: ignore[attr-defined]
        measured_up_to_bytes=option.measured_up_to_bytes,  # type: ignore[attr-defined]
        usable_bytes=option.usable_bytes,  # type: ignore[attr-defined]
        headroom_fraction=option.headroom_fraction,  # type: ignore[attr-defined]
        tokens_per_s=option.decode_tokens_per_s,  # type: ignore[attr-defined]
        train_hours=option.train_hours,  # type: ignore[attr-defined]
        images_per_min=option.images_per_min,  # type: ignore[attr-defined]
    )


def _compare_models(parsed: ParsedQuery, currency: str) -> CompareAnswer:
    """Each model with the same job: on the card named, else where its answer would put it."""
    assert parsed.workload is not None
    other = second_model(parsed)
    assert other is not None
    swapped = parsed.workload.model_copy(
        update={
            "model": other.id,
            "kind": other.kind,
            "params_b": None,
            "active_params_b": None,
            "arch": None,
        }
    )
    sides = []
    assumed: list[tuple[str, str]] = []
    for asked in (parsed, parsed.model_copy(update={"workload": swapped})):
        rec = recommend_query(asked, default_currency=currency)
        pick = rec.named or rec.headline
        if pick is None:
            continue
        verdict = rec.verdict if rec.named is not None or pick is rec.headline else None
        side = _side_of(rec, pick, verdict, currency, rec.result.model.name)
        if rec.named is not None and verdict is not None and verdict.state not in RUNS:
            side.fits_as = _in_format_that_fits(_on_runtime_of(asked, rec), verdict.fix, currency)
        sides.append(side)
        assumed = assumed or said_assumed(asked, rec)
    return CompareAnswer(
        currency=currency,
        model_name=None,
        sides=sides,
        models=True,
        verdict=verdict_of(sides, True),
        assumed=assumed,
    )


def _on_runtime_of(asked: ParsedQuery, rec: Any) -> ParsedQuery:
    """The job pinned to the runtime its answer assumed: another weight format of it is
    judged, and its speed fitted, on the same program (data/decode_speed.toml per runtime).
    Left free, FP8 picked vLLM: a 14B in FP8 decoded at 46 tok/s beside its 17 in BF16
    under transformers, 2.7x faster for half the bytes."""
    w = asked.workload
    runtime = rec.result.estimate.runtime if rec.result.estimate is not None else None
    if w is None or runtime is None or w.runtime is not None:
        return asked
    return asked.model_copy(update={"workload": w.model_copy(update={"runtime": runtime})})


# The defaults a comparison of two models states: they move both the memory and the speed
SAID_ASSUMED = ("runtime", "weights_format", "context_tokens")
# The parser's reading of a bare "量化" (parse/platform.py vague_quant_runtime): the file and
# program the speeds are for
_SAID_PARSED = ("quantized_local", "quantized_served")


def said_assumed(parsed: ParsedQuery, rec: Any) -> list[tuple[str, str]]:
    """The defaults a comparison states: the parser's reading of "量化", then the engine's."""
    notes = (n.split(" = ", 1) for n in parsed.assumed if n.startswith(_SAID_PARSED))
    said = [(f, v) for f, v in notes]
    return said + [(a.field, a.value) for a in rec.result.assumed if a.field in SAID_ASSUMED]


def _in_format_that_fits(asked: ParsedQuery, fix: str | None, currency: str) -> FormatChange | None:
    """The same job in the weight format the cheapest change names ("quantize:fp8"), where
    the question named none: judged on the same card, with its speed."""
    w = asked.workload
    if w is None or w.weights_format is not None or not (fix or "").startswith("quantize:"):
        return None
    fmt = (fix or "").removeprefix("quantize:")
    changed = asked.model_copy(update={"workload": w.model_copy(update={"weights_format": fmt})})
    rec = recommend_query(changed, default_currency=currency)
    if rec.named is None or rec.verdict is None:
        return None
    return FormatChange(
        format=fmt,
        verdict=rec.verdict.state,
        per_card_bytes=rec.named.per_gpu_bytes,
        tokens_per_s=rec.named.decode_tokens_per_s,
    )


def _base(gpu_id: str, count: int, currency: str) -> dict[str, Any]:
    gpu = catalog.gpus()[gpu_id]
    rent = cheapest_price(gpu_id, catalog.load_prices(), currency)
    buy = buy_price(gpu_id, currency)
    return {
        "gpu_id": gpu_id,
        "gpu_name": gpu.name,
        "count": count,
        "vram_gb": gpu.vram_gb,
        "bandwidth_gbs": gpu.memory_bandwidth_gbs,
        "tflops_16bit": gpu.fp16_bf16_tensor_dense_tflops,
        "rent_per_hour": round(rent.amount * count, 2) if rent else None,
        "buy_price": buy.price,
        "buy_used": buy.used,
        "buy_as": buy.sold_as,
        "buy_restricted": buy.restricted,
    }


def answer(parsed: ParsedQuery, currency: str) -> CompareAnswer:
    if not compares_cards(parsed):
        return _compare_models(parsed, currency)
    assert parsed.gpu_id is not None
    first = (parsed.gpu_id, parsed.gpu_count or 1)
    cards = [first] + [(g, n or 1) for g, n in parsed.other_cards]
    if parsed.workload is None:
        sides = [
            Side(
                **_base(g, n, currency),
                runs=capability_rows(catalog.gpus()[g], n, card_fit(g, n)),
            )
            for g, n in cards
        ]
        return CompareAnswer(currency=currency, model_name=None, sides=sides)
    # "A6000 vs 2x 3090": a card named without a count is one card, not the first's count
    asked = parsed.model_copy(update={"other_cards": [(g, n or 1) for g, n in parsed.other_cards]})
    rec = recommend_query(asked, default_currency=currency)
    if _counts_unasked(parsed) and not all(
        v.state != "no_fit" for v in [rec.verdict, *(a.verdict for a in rec.also)] if v
    ):
        # "a100 和 h100 跑 llama 3.1 70b 哪个快": neither holds 70B alone, so each card is
        # compared at the fewest of it that run the job (2× A100 vs 2× H100), said so
        # a card that runs it alone (tight included) stays one: "买4090还是a6000 跑70b" is
        # the A6000 alone against the 4090s it takes, not 2x A6000
        alone = {
            o.gpu_id
            for o, v in [(rec.named, rec.verdict), *((a.option, a.verdict) for a in rec.also)]
            if o is not None and v is not None and v.state != "no_fit"
        }
        fewest = [(g, 1 if g in alone else _fewest_cards(parsed, g, currency)) for g, _ in cards]
        first_n, others = fewest[0], fewest[1:]
        asked = parsed.model_copy(
            update={"gpu_count": first_n[1], "other_cards": others, "ask_count": False}
        )
        rec = recommend_query(asked, default_currency=currency)
    judged = []
    if rec.named is not None and rec.verdict is not None:
        judged.append((rec.named, rec.verdict))
    judged += [(a.option, a.verdict) for a in rec.also]
    sides = []
    for option, judgement in judged:
        sides.append(
            Side(
                **_base(option.gpu_id, option.count, currency),
                verdict=judgement.state,
                per_card_bytes=option.per_gpu_bytes,
                measured_up_to_bytes=option.measured_up_to_bytes,
                usable_bytes=option.usable_bytes,
                headroom_fraction=option.headroom_fraction,
                tokens_per_s=option.decode_tokens_per_s,
                train_hours=option.train_hours,
                images_per_min=option.images_per_min,
            )
        )
    _offer_fp8(_on_runtime_of(asked, rec), sides, currency)
    model = rec.result.model
    serving = _plan_serving_sides(asked, sides, currency)
    verdict = _serving_verdict(sides) if serving else verdict_of(sides, False)
    if verdict is not None and "purchase" in parsed.cues:
        verdict = _cheaper_to_buy(verdict, sides)
    # the runtime and the weights the speeds are for, where the question left them open:
    # "跑70b量化" is llama.cpp's Q4_K_M (~20 tok/s on 2x 4090), said so, not a silent INT4
    assumed = said_assumed(parsed, rec)
    return CompareAnswer(
        currency=currency, model_name=model.name, sides=sides, verdict=verdict, assumed=assumed
    )


def _cheaper_to_buy(verdict: Verdict, sides: list[Side]) -> Verdict:
    """A question about buying compares what the cards cost to buy, not the hourly rent:
    '2x 4090 faster, the A6000 cheaper per hour' answered '买4090还是a6000' with a rental."""
    if verdict.basis != "faster":
        return verdict
    priced = [s for s in sides if s.verdict in RUNS and s.buy_price]
    if len(priced) < 2:
        return verdict
    a, b = sorted(priced[:2], key=lambda s: (s.buy_price or 0) * s.count)
    low, high = (a.buy_price or 0) * a.count, (b.buy_price or 0) * b.count
    return verdict.model_copy(
        update={"cheaper": None, "cheaper_to_buy": _label(a, False), "buy_totals": (low, high)}
    )


def _counts_unasked(parsed: ParsedQuery) -> bool:
    return parsed.gpu_count is None and all(n is None for _, n in parsed.other_cards)


def _fewest_cards(parsed: ParsedQuery, gpu_id: str, currency: str) -> int:
    """The fewest of `gpu_id` that run the job, tight included: the rule that keeps a card
    that runs it alone at one card holds for every side ("买4090还是a6000 跑70b": 2x 4090,
    tight, against the one A6000, tight; not the 4x 4090 "需要几张" answers with the
    guide's headroom). The count "需要几张" answers (count_asked) bounds the counts tried."""
    one = parsed.model_copy(
        update={"gpu_id": gpu_id, "gpu_count": None, "other_cards": [], "ask_count": True}
    )
    named = recommend_query(one, default_currency=currency).named
    if named is None:
        return 1
    for count in (n for n in COUNTS if 1 < n < named.count):
        fewer = one.model_copy(update={"gpu_count": count, "ask_count": False})
        verdict = recommend_query(fewer, default_currency=currency).verdict
        if verdict is not None and verdict.state in RUNS:
            return count
    return named.count


def serves(parsed: ParsedQuery) -> bool:
    """An LLM served to many: a serving word or engine named, or more than one stream."""
    w = parsed.workload
    if w is None or w.mode.is_training or w.kind is None or w.kind.value != "llm":
        return False
    return "serving" in parsed.cues or (w.concurrency or 0) > 1 or (w.users or 0) > 1


def _plan_serving_sides(asked: ParsedQuery, sides: list[Side], currency: str) -> bool:
    """Each card's serving plan for the load asked (else a full engine's, vLLM's default
    --max-num-seqs): the replicas, tensor-parallel size, speed per user and cost per
    million tokens, so cards are compared as served, not at batch 1 (a card one copy of
    the model does not fit is planned at the tensor-parallel group that holds it)."""
    w = asked.workload
    if w is None or not serves(asked):
        return False
    assumed = not (w.users or w.concurrency or w.qps)
    users = w.users or w.concurrency or 1
    planned = False
    for side in sides:
        option: ServeOption | None = None
        if assumed:  # no load named: one engine on the fewest cards, as full as it runs
            found = smallest_replica(w, side.gpu_id, currency)
            option, context, concurrency = (
                (found[0], found[1], found[0].max_num_seqs) if found else (None, 0, 0)
            )
        else:
            plan = plan_serving(
                w, users, bool(w.users_are_people), currency, [side.gpu_id], limit=1
            )
            if plan.options:
                option, context, concurrency = (
                    plan.options[0],
                    plan.context_tokens,
                    plan.concurrency,
                )
        if option is None:
            continue
        o = option
        per_million = (
            round(o.price_per_hour / (o.tokens_per_s_total * 3600) * 1e6, 3)
            if o.price_per_hour and o.tokens_per_s_total
            else None
        )
        side.serve = ServeSide(
            concurrency=concurrency,
            concurrency_assumed=assumed,
            context_tokens=context,
            cards_per_replica=o.cards_per_replica,
            replicas=o.replicas,
            total_cards=o.total_cards,
            max_num_seqs=o.max_num_seqs,
            tokens_per_s_per_user=o.tokens_per_s_per_user,
            tokens_per_s_total=o.tokens_per_s_total,
            meets_target=o.meets_target,
            price_per_hour=o.price_per_hour,
            price_per_million_tokens=per_million,
        )
        planned = True
    return planned


def _serving_verdict(sides: list[Side]) -> Verdict | None:
    """The card whose plan generates a million tokens for less (the speed target met
    first); the one faster per user named beside it where that is the other card."""
    planned = [s for s in sides if s.serve is not None and s.serve.price_per_million_tokens]
    if not planned:
        return Verdict(basis="none_fits")
    if len(planned) == 1:
        other = next((s for s in sides if s is not planned[0]), None)
        return Verdict(
            basis="only_fits",
            winner=_label(planned[0], False),
            loser=_label(other, False) if other else None,
        )

    def key(s: Side) -> tuple[bool, float]:
        assert s.serve is not None and s.serve.price_per_million_tokens is not None
        return (not s.serve.meets_target, s.serve.price_per_million_tokens)

    win, lose = sorted(planned, key=key)[:2]
    assert win.serve is not None and lose.serve is not None
    quick = lose if lose.serve.tokens_per_s_per_user > win.serve.tokens_per_s_per_user else win
    return Verdict(
        basis="cheaper_per_token",
        winner=_label(win, False),
        loser=_label(lose, False),
        winner_value=win.serve.price_per_million_tokens,
        loser_value=lose.serve.price_per_million_tokens,
        faster=_label(quick, False),
    )


def _offer_fp8(asked: ParsedQuery, sides: list[Side], currency: str) -> None:
    """LLM inference asked in 16 bits on cards with native fp8 (H100, H200, L40S, 4090):
    the same job in fp8 beside it, as the change a server would make (half the weights,
    tensor-core fp8 speed)."""
    w = asked.workload
    if w is None or w.mode.is_training or (w.weights_format or "bf16") not in ("bf16", "fp16"):
        return
    if not any(catalog.gpus()[s.gpu_id].fp8_supported for s in sides):
        return
    fp8 = asked.model_copy(update={"workload": w.model_copy(update={"weights_format": "fp8"})})
    rec = recommend_query(fp8, default_currency=currency)
    if rec.result.model.kind.value != "llm":
        return
    judged = []
    if rec.named is not None and rec.verdict is not None:
        judged.append((rec.named, rec.verdict))
    judged += [(a.option, a.verdict) for a in rec.also]
    by_card = {(o.gpu_id, o.count): (o, v) for o, v in judged}
    for side in sides:
        found = by_card.get((side.gpu_id, side.count))
        if found is None or not catalog.gpus()[side.gpu_id].fp8_supported:
            continue
        option, verdict = found
        side.fp8_verdict = verdict.state
        side.fp8_per_card_bytes = option.per_gpu_bytes
        side.fp8_tokens_per_s = option.decode_tokens_per_s


RUNS = ("fits", "tight")
# Two models' memory within this share of each other: "about the same" (below the
# estimate's own precision, so no winner is named on it)
SAME_MEMORY_SHARE = 0.03


def _label(side: Side, models: bool) -> str:
    if models:
        return side.model_name or side.gpu_name
    return f"{side.count}× {side.gpu_name}" if side.count > 1 else side.gpu_name


def _faster(a: Side, b: Side) -> bool | None:
    """Whether `a` does the job faster than `b` (decode speed, hours, images per minute)."""
    if a.tokens_per_s and b.tokens_per_s:
        return a.tokens_per_s > b.tokens_per_s
    if a.train_hours and b.train_hours:
        return a.train_hours < b.train_hours
    if a.images_per_min and b.images_per_min:
        return a.images_per_min > b.images_per_min
    return None


def _speed(s: Side) -> tuple[float | None, str]:
    if s.tokens_per_s:
        return s.tokens_per_s, "tok/s"
    if s.train_hours:
        return s.train_hours, "h"
    return s.images_per_min, "img/min"


def verdict_of(sides: list[Side], models: bool) -> Verdict | None:
    """Which side wins, for a job judged on each (None without a job or with one side)."""
    judged = [s for s in sides if s.verdict is not None]
    if len(judged) < 2:
        return None
    running = [s for s in judged if s.verdict in RUNS]
    if models and len(running) == len(judged):
        a, b = sorted(judged, key=lambda s: s.per_card_bytes or 0)[:2]
        lo, hi = a.per_card_bytes or 0, b.per_card_bytes or 0
        quick = _faster(a, b)
        faster = None if quick is None else _label(a if quick else b, models)
        basis = "same_memory" if hi - lo <= SAME_MEMORY_SHARE * hi else "less_memory"
        return Verdict(
            basis=basis,
            winner=_label(a, models),
            loser=_label(b, models),
            winner_value=round(lo / 2**30, 1),
            loser_value=round(hi / 2**30, 1),
            faster=faster,
        )
    if not running:
        return Verdict(basis="none_fits")
    if len(running) == 1:
        win = running[0]
        other = next(s for s in judged if s is not win)
        alt = other.fits_as if other.fits_as and other.fits_as.verdict in RUNS else None
        return Verdict(
            basis="only_fits",
            winner=_label(win, models),
            loser=_label(other, models),
            winner_value=win.tokens_per_s if alt else None,
            loser_format=alt.format if alt else None,
            loser_format_tokens_per_s=alt.tokens_per_s if alt else None,
        )
    a, b = running[:2]
    quick = _faster(a, b)
    if quick is None:
        return None
    win, lose = (a, b) if quick else (b, a)
    cheaper = None
    if win.rent_per_hour and lose.rent_per_hour and lose.rent_per_hour < win.rent_per_hour:
        cheaper = _label(lose, models)
    return Verdict(
        basis="faster",
        winner=_label(win, models),
        loser=_label(lose, models),
        winner_value=_speed(win)[0],
        loser_value=_speed(lose)[0],
        cheaper=cheaper,
        unit=_speed(win)[1],
    )
