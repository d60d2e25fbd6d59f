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

from advisor import catalog
from advisor.fit import card_fit
from advisor.kinds.capability import capability_rows
from advisor.kinds.compare_serving import offer_fp8, plan_serving_sides, serving_verdict
from advisor.kinds.compare_sides import CompareAnswer, FormatChange, Side, Verdict
from advisor.kinds.compare_verdict import RUNS, side_label, verdict_of
from advisor.kinds.purchase_costs import buy_price
from advisor.parse import ParsedQuery
from advisor.recommend import Recommendation, cheapest_price, recommend_query
from advisor.recommend.card_counts import COUNTS


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


def _at_fewest_cards(
    parsed: ParsedQuery, rec: Recommendation, cards: list[tuple[str, int]], currency: str
) -> tuple[ParsedQuery, Recommendation]:
    """The question with each card at the fewest of it that run the job, and its answer.
    "a100 和 h100 跑 llama 3.1 70b 哪个快": neither holds 70B alone, so each card is
    compared at the fewest of it that run the job (2× A100 vs 2× H100), said so; a card
    that runs it alone (tight included) stays one: "买4090还是a6000 跑70b" is the A6000
    alone against the 4090s it takes, not 2x A6000."""
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
    return asked, recommend_query(asked, default_currency=currency)


def _judged_sides(rec: Recommendation, currency: str) -> list[Side]:
    """One side per card judged: the named card and each other card, with its verdict,
    figure and speed."""
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
    return sides


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
        asked, rec = _at_fewest_cards(parsed, rec, cards, currency)
    sides = _judged_sides(rec, currency)
    offer_fp8(_on_runtime_of(asked, rec), sides, currency)
    model = rec.result.model
    serving = plan_serving_sides(asked, sides, currency)
    verdict = serving_verdict(sides) if serving else verdict_of(sides, False)
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
        update={"cheaper": None, "cheaper_to_buy": side_label(a, False), "buy_totals": (low, high)}
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
