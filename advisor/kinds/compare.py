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
from advisor.kinds.purchase import card_prices
from advisor.parse import ParsedQuery
from advisor.recommend import cheapest_price, recommend_query


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
    # with a workload
    verdict: str | None = None  # fits | tight | no_fit | blocked | split
    per_card_bytes: int | None = None
    usable_bytes: int | None = None
    headroom_fraction: float | None = None
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


class CompareAnswer(BaseModel):
    currency: str
    model_name: str | None  # the workload compared on, or None (cards alone)
    sides: list[Side]
    models: bool = False  # the sides are two models (on the card named or each one's pick)

    def public_json(self) -> dict[str, Any]:
        return {
            "compare": {
                "model": self.model_name,
                "currency": self.currency,
                "sides": [
                    s.model_dump(exclude={"runs"}) | {"runs": [r.model_dump() for r in s.runs]}
                    for s in self.sides
                ],
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
    for asked in (parsed, parsed.model_copy(update={"workload": swapped})):
        rec = recommend_query(asked, default_currency=currency)
        pick = rec.named or rec.headline
        if pick is None:
            continue
        verdict = rec.verdict if rec.named is not None or pick is rec.headline else None
        sides.append(_side_of(rec, pick, verdict, currency, rec.result.model.name))
    return CompareAnswer(currency=currency, model_name=None, sides=sides, models=True)


def _buy_price(gpu_id: str, currency: str) -> tuple[float | None, bool]:
    entries = [e for e in card_prices() if e.gpu_id == gpu_id]
    entries.sort(key=lambda e: e.condition != "new")
    if not entries:
        return None, False
    return entries[0].price(currency), entries[0].condition == "used"


def _base(gpu_id: str, count: int, currency: str) -> dict[str, Any]:
    gpu = catalog.gpus()[gpu_id]
    rent = cheapest_price(gpu_id, catalog.load_prices(), currency)
    buy, used = _buy_price(gpu_id, currency)
    return {
        "gpu_id": gpu_id,
        "gpu_name": gpu.name,
        "count": count,
        "vram_gb": gpu.vram_gb,
        "bandwidth_gbs": gpu.memory_bandwidth_gbs,
        "tflops_16bit": gpu.fp16_bf16_tensor_dense_tflops,
        "rent_per_hour": round(rent.amount * count, 2) if rent else None,
        "buy_price": buy,
        "buy_used": used,
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
    judged = []
    if rec.named is not None and rec.verdict is not None:
        judged.append((rec.named, rec.verdict))
    judged += [(a.option, a.verdict) for a in rec.also]
    sides = []
    for option, verdict in judged:
        sides.append(
            Side(
                **_base(option.gpu_id, option.count, currency),
                verdict=verdict.state,
                per_card_bytes=option.per_gpu_bytes,
                usable_bytes=option.usable_bytes,
                headroom_fraction=option.headroom_fraction,
                tokens_per_s=option.decode_tokens_per_s,
                train_hours=option.train_hours,
                images_per_min=option.images_per_min,
            )
        )
    _offer_fp8(asked, sides, currency)
    model = rec.result.model
    return CompareAnswer(currency=currency, model_name=model.name, sides=sides)


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
