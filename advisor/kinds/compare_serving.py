"""Cards compared as served: each card's serving plan for the load asked (replicas,
tensor-parallel size, speed per user, cost per million tokens), the card cheaper per token,
and the same job in fp8 beside a 16-bit one on cards with native fp8."""

from __future__ import annotations

from advisor import catalog
from advisor.kinds.compare_sides import ServeSide, Side, Verdict
from advisor.kinds.compare_verdict import side_label
from advisor.parse import ParsedQuery
from advisor.recommend import recommend_query
from advisor.serving import ServeOption, plan_serving, smallest_replica


def serves(parsed: ParsedQuery) -> bool:
    """An LLM served to many: a serving word or engine named, or more than one stream."""
    w = parsed.workload
    if w is None or w.mode.is_training or w.kind is None or w.kind.value != "llm":
        return False
    return "serving" in parsed.cues or (w.concurrency or 0) > 1 or (w.users or 0) > 1


def plan_serving_sides(asked: ParsedQuery, sides: list[Side], currency: str) -> bool:
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


def serving_verdict(sides: list[Side]) -> Verdict | None:
    """The card whose plan generates a million tokens for less (the speed target met
    first); the one faster per user named beside it where that is the other card."""
    planned = [s for s in sides if s.serve is not None and s.serve.price_per_million_tokens]
    if not planned:
        return Verdict(basis="none_fits")
    if len(planned) == 1:
        other = next((s for s in sides if s is not planned[0]), None)
        return Verdict(
            basis="only_fits",
            winner=side_label(planned[0], False),
            loser=side_label(other, False) if other else None,
        )

    def key(s: Side) -> tuple[bool, float]:
        assert s.serve is not None and s.serve.price_per_million_tokens is not None
        return (not s.serve.meets_target, s.serve.price_per_million_tokens)

    win, lose = sorted(planned, key=key)[:2]
    assert win.serve is not None and lose.serve is not None
    quick = lose if lose.serve.tokens_per_s_per_user > win.serve.tokens_per_s_per_user else win
    return Verdict(
        basis="cheaper_per_token",
        winner=side_label(win, False),
        loser=side_label(lose, False),
        winner_value=win.serve.price_per_million_tokens,
        loser_value=lose.serve.price_per_million_tokens,
        faster=side_label(quick, False),
    )


def offer_fp8(asked: ParsedQuery, sides: list[Side], currency: str) -> None:
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
