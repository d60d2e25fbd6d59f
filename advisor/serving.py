"""Serving N users: how many generate at once, the KV cache they need at the context, the
speed each sees under continuous batching, and how many cards (replicas) that takes, with
the vLLM flags that realise it.

A replica is one vLLM engine on `tp` cards. Its KV budget is what `gpu_memory_utilization`
x the card leaves after weights, profile activations, non-torch buffers and CUDA graphs
(advisor/memory/runtimes/vllm.py `serving_fit`, the engine's own accounting). A decode step
reads each card's weights and every running sequence's KV cache once (bandwidth-bound)
and does 2 x active params FLOPs per sequence (compute-bound at large batches): the step
takes the larger of the two, plus a fixed cost per layer and, under TP, two all-reduces per
layer. A replica runs as many sequences as its KV cache holds, the scheduler allows
(`--max-num-seqs`) and the per-user speed target permits; the replicas needed follow.
Constants and sources: data/serving.toml, data/capabilities.toml [speed].
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.constraints import allreduce_latency_s, blockers, nvlinked, speed_constants, tp_ok
from advisor.decode_speed import decode_fit
from advisor.memory import estimate
from advisor.memory.runtimes.vllm import serving_fit
from advisor.models.choices import Parallelism, Runtime
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.specs import PriceSpec

DATA_FILE = Path(__file__).resolve().parent / "data" / "serving.toml"
GIB = 2**30


@cache
def serving_table() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def active_streams(users: int, people: bool) -> int:
    """Sequences generating at once: all of them for streams ("并发 50"), the active share
    of people ("30 个学生"), at least one."""
    if not people:
        return users
    return max(1, math.ceil(users * serving_table()["active_share"]["people"]))


def streams_from_qps(qps: float) -> int:
    """Little's law: requests per second x seconds per request (its output at the target
    speed)."""
    t = serving_table()
    seconds = t["qps"]["output_tokens"] / t["speed"]["target_tokens_per_s"]
    return max(1, math.ceil(qps * seconds))


class ServeOption(BaseModel):
    """One way to serve the load: `replicas` engines of `cards_per_replica` cards each."""

    gpu_id: str
    gpu_name: str
    cards_per_replica: int  # vLLM --tensor-parallel-size
    replicas: int
    total_cards: int
    max_num_seqs: int  # sequences one replica runs at once (--max-num-seqs)
    kv_tokens_per_replica: int  # what its KV cache holds
    tokens_per_s_per_user: float  # at the load each replica carries
    tokens_per_s_total: float  # all replicas together
    meets_target: bool  # each user gets at least the target speed
    price_per_hour: float | None  # all cards together
    currency: str | None
    platform: str | None
    price_date: str | None
    flags: str  # the vllm serve flags of one replica
    max_model_len: int = 0  # its --max-model-len: the longest request it takes
    # the card has no bf16 (Volta, Turing): the 16-bit weights are served in fp16 (--dtype half)
    fp16_instead_of_bf16: bool = False


class ServePlan(BaseModel):
    users: int  # as asked: people or streams
    people: bool  # users are people (only a share generates at once)
    active_share: float | None  # of people, generating at once
    concurrency: int  # sequences generating at once
    context_tokens: int  # per sequence: --max-model-len
    kv_bytes_per_sequence: int  # at the full context, all cards of a replica together
    target_tokens_per_s: float
    options: list[ServeOption]  # cheapest per hour first, then the fewest cards
    context_assumed: bool  # no context named: the engine's default was taken
    # the context asked is the average request's: the KV pool is sized by it and
    # --max-model-len (in each option's flags) is set above it
    context_average: bool = False
    assumed: list[str]
    sources: list[str]


def _replica_estimate(w: Workload, tp: int, context: int) -> EstimateResult:
    update: dict[str, Any] = {
        "runtime": w.runtime if w.runtime in (Runtime.vllm, Runtime.sglang) else Runtime.vllm,
        "num_gpus": tp,
        "parallelism": Parallelism.tp if tp > 1 else None,
        "concurrency": 1,
        "batch_size": 1,
        "context_tokens": context,
        "prompt_tokens": None,
        "new_tokens": None,
    }
    return estimate(w.model_copy(update=update))


def quantization_flag(weights_format: str | None) -> str:
    """` --quantization METHOD` for a quantized weight format vLLM serves, else ""."""
    method = serving_table()["quantization"].get(weights_format or "")
    return f" --quantization {method}" if isinstance(method, str) else ""


def _fp16_instead_of_bf16(result: EstimateResult, gpu: GpuSpec) -> bool:
    """A 16-bit model (bf16 by default) on a card without bf16: vLLM must run it in fp16."""
    spec = catalog.models().get(result.model.id or "")
    fmt = result.workload.weights_format or (spec.default_format if spec else None) or "bf16"
    return not gpu.bf16_supported and fmt in ("bf16", "fp16")


def _step_s(result: EstimateResult, gpu: GpuSpec, tp: int, seqs: int, context: int) -> float:
    """One decode step for `seqs` running sequences at `context` tokens each, per card."""
    c = speed_constants()
    est, model = result.estimate, result.model
    assert est is not None
    weights = est.breakdown.get("weights", 0)
    kv = seqs * context * (est.kv_bytes_per_token or 0)
    fit = decode_fit(getattr(est.runtime, "value", est.runtime), gpu)
    read_s = (weights + kv) / (fit.efficiency * gpu.memory_bandwidth_gbs * 1e9)
    flops = 2 * model.active_params_b * 1e9 * seqs / tp
    compute_s = flops / (gpu.dense_tflops * 1e12 * c["prefill_efficiency"])
    layers = model.arch.layers if model.arch else 32
    step = max(read_s, compute_s) + layers * fit.layer_s
    if tp > 1:
        step += layers * 2 * allreduce_latency_s(gpu, tp)
    return step


def _most_sequences(
    result: EstimateResult, gpu: GpuSpec, tp: int, context: int, cap: int, target: float
) -> int:
    """The most sequences a replica runs while each keeps `target` tok/s (at least one)."""
    lo, hi = 1, cap
    if 1 / _step_s(result, gpu, tp, 1, context) < target:
        return 1
    while lo < hi:  # the step grows with the sequences: bisect the largest that keeps pace
        mid = (lo + hi + 1) // 2
        if 1 / _step_s(result, gpu, tp, mid, context) >= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


def plan_option(
    result: EstimateResult,
    gpu: GpuSpec,
    tp: int,
    active: int,
    context: int,
    price: Any,
    max_model_len: int | None = None,
) -> ServeOption | None:
    """Replicas of `tp` cards of `gpu` for `active` sequences, or None where one replica
    holds no sequence of this context (or the card cannot run the engine). `context` sizes
    the KV pool; `max_model_len` (an average context asked: above it) is the longest
    request the engine takes, at most what the replica's KV cache holds."""
    t = serving_table()
    util = t["engine"]["gpu_memory_utilization"]
    fit = serving_fit(result.estimate, context, int(gpu.usable_vram_gib * GIB), util)  # type: ignore[arg-type]
    if fit.max_concurrency < 1 or blockers(gpu, result):
        return None
    target = t["speed"]["target_tokens_per_s"]
    cap = min(fit.max_concurrency, t["engine"]["max_num_seqs"], active)
    per_replica = _most_sequences(result, gpu, tp, context, cap, target)
    replicas = math.ceil(active / per_replica)
    load = math.ceil(active / replicas)  # the sequences each replica actually carries
    speed = 1 / _step_s(result, gpu, tp, load, context)
    cards = replicas * tp
    half = _fp16_instead_of_bf16(result, gpu)
    longest = context if max_model_len is None else max(context, min(max_model_len, _fits(fit)))
    flags = (
        f"--max-model-len {longest} --max-num-seqs {per_replica} --gpu-memory-utilization {util}"
        + (f" --tensor-parallel-size {tp}" if tp > 1 else "")
        + (" --dtype half" if half else "")
        + quantization_flag(result.workload.weights_format)
    )
    return ServeOption(
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        cards_per_replica=tp,
        replicas=replicas,
        total_cards=cards,
        max_num_seqs=per_replica,
        kv_tokens_per_replica=fit.max_context_tokens,
        tokens_per_s_per_user=round(speed, 1),
        tokens_per_s_total=round(speed * active, 1),
        meets_target=speed >= target * 0.999,
        price_per_hour=round(price.amount * cards, 2) if price is not None else None,
        currency=price.currency if price is not None else None,
        platform=price.platform if price is not None else None,
        price_date=price.source_date if price is not None else None,
        flags=flags,
        max_model_len=longest,
        fp16_instead_of_bf16=half,
    )


def _fits(fit: Any) -> int:
    """The longest request one replica's KV cache holds, in whole kibi-tokens."""
    return max(1024, int(fit.max_context_tokens) // 1024 * 1024)


def max_model_len_for(w: Workload, context: int, model_limit: int | None) -> int | None:
    """--max-model-len for an average context: a multiple of it (data/serving.toml
    [engine]), at most the model's own limit; None when the context asked is the longest."""
    if not w.context_average:
        return None
    longest = context * serving_table()["engine"]["max_model_len_over_average"]
    return max(context, min(longest, model_limit or longest))


def plan_serving(
    w: Workload,
    users: int,
    people: bool,
    currency: str,
    gpu_ids: Iterable[str] | None = None,
    prices: list[PriceSpec] | None = None,
    limit: int = 3,
) -> ServePlan:
    """The cheapest ways per hour to serve `users` (people or streams) with this model at
    its context; `gpu_ids`: only these cards (the user's own), else every rented one. The
    replicas are tried by `_replica_options`."""
    t = serving_table()
    assumed: list[str] = []
    context = w.context_tokens or t["engine"]["default_context_tokens"]
    if w.context_tokens is None:
        assumed.append(f"context_tokens = {context}")
    active = active_streams(users, people)
    if people:
        assumed.append(f"active_share = {t['active_share']['people']}")
    prices = prices if prices is not None else catalog.load_prices()
    all_gpus = catalog.gpus()
    named = [all_gpus[g] for g in gpu_ids or () if g in all_gpus]
    options, kv_seq = _replica_options(w, named, prices, currency, active, context)
    options = _best(options, limit)
    return ServePlan(
        users=users,
        people=people,
        active_share=t["active_share"]["people"] if people else None,
        concurrency=active,
        context_tokens=context,
        kv_bytes_per_sequence=kv_seq,
        target_tokens_per_s=t["speed"]["target_tokens_per_s"],
        options=options,
        context_assumed=w.context_tokens is None,
        context_average=w.context_average,
        assumed=assumed,
        sources=[t[k]["source"] for k in ("active_share", "speed", "engine")],
    )


def _replica_options(
    w: Workload,
    named: list[GpuSpec],
    prices: list[PriceSpec],
    currency: str,
    active: int,
    context: int,
) -> tuple[list[ServeOption], int]:
    """Every replica that serves the load: each tensor-parallel size vLLM accepts for the
    model, on each card named (else each rented one at a price) that has a known speed and
    links the group. (options, one sequence's KV cache bytes over the group)."""
    from advisor.recommend.pricing import cheapest_price

    gpus = named or list(catalog.rented_gpus())  # a merged entry at its smaller memory
    options: list[ServeOption] = []
    held: set[str] = set()  # cards a smaller group already serves the model on
    kv_seq = 0
    for tp in tensor_parallel_sizes(w):
        result = _replica_estimate(w, tp, context)
        if not tp_ok(result, tp):
            continue  # vLLM refuses a tensor-parallel size that does not divide the heads
        if not kv_seq and result.estimate is not None:  # per card: the group's together
            kv_seq = int((result.estimate.kv_bytes_per_token or 0) * tp * context)
        model_limit = result.model.arch.max_context_tokens if result.model.arch else None
        longest = max_model_len_for(w, context, model_limit)
        for gpu in gpus:
            if gpu.memory_bandwidth_gbs <= 0:
                continue  # no speed known: no capacity claimed
            if not group_linked(gpu, tp, w) and gpu.id in held:
                # past a pair over PCIe only where no smaller group holds one replica (four
                # A10G at --tensor-parallel-size 4, as AWS g5.12xlarge runs a 14B model),
                # the all-reduces' cost counted in the speed (_step_s)
                continue
            price = cheapest_price(gpu.id, prices, currency)
            if price is None and not named:
                continue
            option = plan_option(result, gpu, tp, active, context, price, longest)
            if option is not None:
                options.append(option)
                held.add(gpu.id)
    return options, kv_seq


def tensor_parallel_sizes(w: Workload) -> list[int]:
    """The replica sizes tried: the user's own ("2x A100 tensor parallel": replicas of
    that group, 1 first where the model needs no split), else one machine's 1/2/4/8."""
    sizes: list[int] = serving_table()["engine"]["tensor_parallel"]
    if w.parallelism == Parallelism.tp and w.num_gpus > 1:
        return [w.num_gpus]
    return sizes


def group_linked(gpu: GpuSpec, tp: int, w: Workload) -> bool:
    """A tensor-parallel group the card's interconnect carries: one card, a pair (over
    PCIe or a bridge), or a group all on NVLink; or the group the user asked for. Past a
    pair over PCIe every step's all-reduces cross the host bridge (vLLM's custom
    all-reduce needs P2P or NVLink): 8 RTX A5000 at --tensor-parallel-size 8 was offered
    for an 8B model that copies on single cards serve."""
    asked = w.parallelism == Parallelism.tp and w.num_gpus == tp
    return tp <= 2 or asked or nvlinked(gpu, tp)


def smallest_replica(w: Workload, gpu_id: str, currency: str) -> tuple[ServeOption, int] | None:
    """One engine on the fewest cards of `gpu_id` that hold the model at its context, filled
    to what it runs at the speed target (its --max-num-seqs): the unit a card is compared
    on when no load is named. With the context served, or None where no group holds it."""
    from advisor.recommend.pricing import cheapest_price

    t = serving_table()
    gpu = catalog.gpus()[gpu_id]
    context = w.context_tokens or t["engine"]["default_context_tokens"]
    price = cheapest_price(gpu.id, catalog.load_prices(), currency)
    if gpu.memory_bandwidth_gbs <= 0:
        return None
    for tp in t["engine"]["tensor_parallel"]:
        result = _replica_estimate(w, tp, context)
        if not tp_ok(result, tp):
            continue
        full = plan_option(result, gpu, tp, t["engine"]["max_num_seqs"], context, price)
        if full is not None:
            one = plan_option(result, gpu, tp, full.max_num_seqs, context, price)
            return (one or full), context
    return None


def _best(options: list[ServeOption], limit: int) -> list[ServeOption]:
    """One option per card (its replica size by _replica_choice), those meeting the speed target
    first, then by price per hour (unpriced last) and by fewer cards; the last place goes
    to the setup with the fewest cards when the cheapest ones are not it (a room of 112
    consumer cards is cheap per hour, and a lot of machines to run)."""
    by_card: dict[str, ServeOption] = {}
    for o in sorted(options, key=_replica_choice):
        by_card.setdefault(o.gpu_id, o)
    ranked = sorted(by_card.values(), key=_rank)
    best = ranked[:limit]
    fast = [o for o in ranked if o.meets_target and o.price_per_hour is not None]
    fewest = min(fast, key=lambda o: (o.total_cards, o.price_per_hour), default=None)
    if fewest is not None and fewest not in best and limit > 1:
        best = best[: limit - 1] + [fewest]
    return best


def _replica_choice(o: ServeOption) -> tuple[bool, int, int, int]:
    """Of one card's replica sizes, the one that carries the load at the speed target on
    the fewest cards: a tensor-parallel group pools its cards' memory after one copy of
    the weights, so where a card's copy leaves room for two sequences (Qwen3-32B fp8 on a
    48 GB L40 at 8k) a pair holds ten times as many, and 9 sequences take 2 cards, not 5
    replicas of 1. The speed target already charges each group its all-reduces (two per
    layer every step, over PCIe where the cards have no NVLink). On a tie data parallel
    first (copies side by side, no all-reduce), then a group over NVLink, the smallest."""
    # bridged workstation cards (A5000, A6000, 3090) link in pairs only: more go over PCIe
    tp = o.cards_per_replica
    pcie = tp > 1 and not nvlinked(catalog.gpus()[o.gpu_id], tp)
    return (not o.meets_target, o.total_cards, pcie, tp)


def _rank(o: ServeOption) -> tuple[bool, float, int]:
    price = o.price_per_hour if o.price_per_hour is not None else math.inf
    return (not o.meets_target, price, o.total_cards)
