"""Which GPU, how many cards, what it costs — for one workload and an optional budget.

Candidates are GPU x count (1, 2, 4, 8; 16/32 flagged multi-node) whose per-card memory,
after sharding, fits with the guide's 20% headroom. Picks that fit with less headroom are
kept and marked risky. Ranked three ways: cheapest per hour, best value (cost to finish
the job), fastest.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import GpuSpec, PriceSpec
from advisor.memory import estimate
from advisor.models import EstimateResult, Kind, Mode, Parallelism, Workload
from advisor.parse import ParsedQuery
from advisor.pitfalls import Pitfall, find_pitfalls

HEADROOM = 0.20  # the guide: keep at least 20% of VRAM free
COUNTS = (1, 2, 4, 8, 16, 32)
CNY_PER_USD = 7.0  # the research catalog's sources used 6.7-7.2; comparisons only
# Model FLOPs utilisation assumed for training time: 40% on datacenter cards with NVLink,
# 30% on PCIe/consumer cards (PaLM paper reports 46% MFU at scale; single-node fine-tunes
# typically reach 30-45%). Decode runs at ~55% of peak memory bandwidth (llmfit default,
# validated on an RTX 4090).
MFU_DATACENTER = 0.40
MFU_CONSUMER = 0.30
DECODE_BW_EFFICIENCY = 0.55
PREFILL_EFFICIENCY = 0.5


class Price(BaseModel):
    amount: float
    currency: str
    platform: str
    source_date: str | None


class Option(BaseModel):
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
    decode_tokens_per_s: float | None = None
    prefill_s: float | None = None
    train_hours: float | None = None
    job_cost: float | None = None
    images_per_min: float | None = None
    why: str = ""


class Recommendation(BaseModel):
    result: EstimateResult
    options: list[Option]  # every candidate that fits, ranked cheapest first
    cheapest: Option | None
    best_value: Option | None
    fastest: Option | None
    named: Option | None  # the card the user named, fits or not
    fixes: list[str]  # for a named card that does not fit: what change would fit
    pitfalls: list[Pitfall]
    guide_task: catalog.TaskSpec | None


def cheapest_price(gpu_id: str, prices: list[PriceSpec], currency: str | None) -> Price | None:
    """The lowest on-demand price we know for one card, preferring the asked currency."""
    mine = [
        p
        for p in prices
        if p.gpu_id == gpu_id and "spot" not in p.tier and "serverless" not in p.tier
    ]
    if not mine:
        return None

    def in_currency(p: PriceSpec) -> float:
        if currency is None or p.currency == currency:
            return p.price_per_gpu_hour
        return p.price_per_gpu_hour * (CNY_PER_USD if currency == "CNY" else 1 / CNY_PER_USD)

    pref = [p for p in mine if currency is None or p.currency == currency] or mine
    best = min(pref, key=in_currency)
    return Price(
        amount=round(in_currency(best), 2),
        currency=currency or best.currency,
        platform=best.platform,
        source_date=best.source_date,
    )


def _workload_for(w: Workload, count: int) -> Workload:
    if count == w.num_gpus:
        return w
    par = w.parallelism
    if count > 1 and par in (None, Parallelism.none):
        par = Parallelism.zero3 if w.mode.is_training else Parallelism.tp
    return w.model_copy(
        update={"num_gpus": count, "parallelism": par if count > 1 else Parallelism.none}
    )


def _tp_ok(result: EstimateResult, count: int) -> bool:
    arch = result.model.arch
    if count == 1 or arch is None or result.workload.mode.is_training:
        return True
    return (
        arch.heads % count == 0
        and arch.kv_heads_ % count == 0
        or arch.kv_heads_ < count
        and count % arch.kv_heads_ == 0
    )


def _speed(result: EstimateResult, gpu: GpuSpec, count: int, opt: Option) -> None:
    w, model = result.workload, result.model
    est = result.estimate
    if est is None:
        return
    if model.kind == Kind.llm and not w.mode.is_training:
        # Decode reads the active weights (MoE: only routed experts) once per token.
        weight_share = est.breakdown.get("weights", 0) * count
        active_share = model.active_params_b / max(model.params_b, 1e-9)
        bytes_per_token = weight_share * active_share + est.breakdown.get("kv_cache", 0) * count
        bw = gpu.memory_bandwidth_gbs * 1e9 * count * (0.9 if count > 1 else 1.0)
        opt.decode_tokens_per_s = round(DECODE_BW_EFFICIENCY * bw / max(bytes_per_token, 1), 1)
        prompt = w.prompt_tokens or w.context_tokens or 4096
        flops = 2 * model.active_params_b * 1e9 * prompt * (w.batch_size or 1)
        opt.prefill_s = round(flops / (gpu.dense_tflops * 1e12 * count * PREFILL_EFFICIENCY), 2)
    elif w.mode.is_training and model.kind in (Kind.llm, Kind.classic, Kind.diffusion):
        tokens = w.train_tokens
        if tokens is None:
            return
        mfu = MFU_DATACENTER if gpu.segment == "datacenter" and gpu.has_nvlink else MFU_CONSUMER
        if count > 1 and not gpu.has_nvlink:
            mfu *= 0.8  # gradients cross PCIe
        trained = model.params_b if w.mode in (Mode.full, Mode.pretrain) else model.params_b * 2 / 3
        flops = 6 * model.active_params_b * 1e9 * tokens * (trained / max(model.params_b, 1e-9))
        opt.train_hours = round(flops / (count * gpu.dense_tflops * 1e12 * mfu) / 3600, 2)
    elif model.kind == Kind.diffusion:
        # Coarse: 2 x denoiser FLOPs per latent token per step, 50% utilisation.
        steps = w.denoise_steps or 30
        tokens = (w.image_width or 1024) * (w.image_height or 1024) / 64 / 4
        flops = 2 * model.params_b * 0.5e9 * tokens * steps * 2
        opt.images_per_min = round(60 / (flops / (gpu.dense_tflops * 1e12 * 0.5)), 1)


def recommend(
    w: Workload,
    gpu_id: str | None = None,
    budget_per_hour: float | None = None,
    budget_total: float | None = None,
    currency: str | None = None,
    prices_file: Path | None = None,
) -> Recommendation:
    prices = catalog.load_prices(prices_file)
    base = estimate(w)
    options: list[Option] = []
    named: Option | None = None
    by_count: dict[int, EstimateResult] = {}  # memory per card does not depend on which card
    for gpu in catalog.gpus().values():
        card_price = cheapest_price(gpu.id, prices, currency)
        for count in COUNTS:
            if count not in by_count:
                trial = _workload_for(w, count)
                by_count[count] = base if trial is w else estimate(trial)
            opt = _option(by_count[count], gpu, count, card_price)
            if opt.fits:
                options.append(opt)
                break  # fewer cards of the same type are always preferable
    if gpu_id is not None:
        named = _option_on(w, catalog.gpus()[gpu_id], max(w.num_gpus, 1), prices, currency)
    # Top picks: comfortable fits on NVIDIA cards (CUDA images just work); AMD/Ascend stay
    # in the full ranked list.
    comfortable = [o for o in options if not o.risky]
    comfortable = [
        o for o in comfortable if catalog.gpus()[o.gpu_id].vendor == "NVIDIA"
    ] or comfortable
    # One machine beats a cluster whenever one machine will do.
    comfortable = [o for o in comfortable if not o.multi_node] or comfortable
    # Training in bf16 (the default when no 16-bit type is named) wants a card that has it:
    # V100/T4 would need the code switched to fp16 with loss scaling.
    if w.mode.is_training and (w.compute_dtype or w.weights_format or "bf16") not in (
        "fp16",
        "fp32",
    ):
        comfortable = [
            o for o in comfortable if catalog.gpus()[o.gpu_id].bf16_supported
        ] or comfortable
    if budget_per_hour is not None:
        comfortable = [
            o
            for o in comfortable
            if o.price_per_hour is None or o.price_per_hour.amount <= budget_per_hour
        ] or comfortable
    if budget_total is not None:
        comfortable = [
            o for o in comfortable if o.job_cost is None or o.job_cost <= budget_total
        ] or comfortable
    priced = [o for o in comfortable if o.price_per_hour is not None]
    cheapest = (
        min(priced, key=lambda o: (o.price_per_hour.amount, o.count))
        if priced
        else (comfortable[0] if comfortable else None)
    )  # type: ignore[union-attr]
    valued = [o for o in priced if o.job_cost is not None]
    if valued:
        best_value = min(valued, key=lambda o: o.job_cost)  # type: ignore[arg-type, return-value]
    elif priced and base.model.kind == Kind.llm and not w.mode.is_training:
        best_value = max(
            priced, key=lambda o: (o.decode_tokens_per_s or 0) / o.price_per_hour.amount
        )  # type: ignore[union-attr]
    else:
        best_value = cheapest
    fastest = _fastest([o for o in comfortable if o.price_per_hour is not None] or comfortable)
    for o in (cheapest, best_value, fastest):
        if o is not None:
            o.why = _why(o, cheapest, best_value, fastest)
    ranked = sorted(
        options,
        key=lambda o: (o.risky, o.price_per_hour.amount if o.price_per_hour else 1e9, o.count),
    )
    fixes = suggest_fixes(w, named) if named is not None and (not named.fits or named.risky) else []
    pick = named if named is not None else cheapest
    pitfalls = find_pitfalls(
        base, catalog.gpus().get(pick.gpu_id) if pick else None, pick, cheapest
    )
    return Recommendation(
        result=base,
        options=ranked,
        cheapest=cheapest,
        best_value=best_value,
        fastest=fastest,
        named=named,
        fixes=fixes,
        pitfalls=pitfalls,
        guide_task=guide_task(base),
    )


def _option_on(
    w: Workload, gpu: GpuSpec, count: int, prices: list[PriceSpec], currency: str | None
) -> Option:
    """The card the user named, fits or not."""
    result = estimate(_workload_for(w, count))
    return _option(result, gpu, count, cheapest_price(gpu.id, prices, currency), speed_always=True)


def _option(
    result: EstimateResult,
    gpu: GpuSpec,
    count: int,
    card_price: Price | None,
    speed_always: bool = False,
) -> Option:
    """`count` cards of one GPU for an estimate: fit, headroom, price for all cards, speed."""
    need = result.estimate.total_bytes if result.estimate else 0  # none: the guide's table decides
    usable = gpu.usable_vram_bytes
    headroom = 1 - need / usable if usable else -1
    fits = need <= usable and _tp_ok(result, count)
    price = card_price
    if price:
        price = price.model_copy(update={"amount": round(price.amount * count, 2)})
    opt = Option(
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        count=count,
        fits=fits,
        risky=fits and headroom < HEADROOM,
        multi_node=count > 8,
        per_gpu_bytes=need,
        usable_bytes=usable,
        headroom_fraction=round(headroom, 3),
        price_per_hour=price,
    )
    if fits or speed_always:
        _speed(result, gpu, count, opt)
        if opt.train_hours is not None and price is not None:
            opt.job_cost = round(opt.train_hours * price.amount, 2)
    return opt


def _fastest(options: list[Option]) -> Option | None:
    def speed(o: Option) -> float:
        if o.train_hours:
            return 1 / o.train_hours
        if o.decode_tokens_per_s:
            return o.decode_tokens_per_s
        if o.images_per_min:
            return o.images_per_min
        g = catalog.gpus()[o.gpu_id]
        return g.dense_tflops * o.count

    return max(options, key=speed) if options else None


def _why(o: Option, cheapest: Option | None, value: Option | None, fastest: Option | None) -> str:
    tags = []
    if o is cheapest:
        tags.append("cheapest")
    if o is value:
        tags.append("best_value")
    if o is fastest:
        tags.append("fastest")
    return ",".join(tags)


def guide_task(result: EstimateResult) -> catalog.TaskSpec | None:
    """The guide's chapter 1-3 row for this workload."""
    kind, mode, params = result.model.kind, result.workload.mode.value, result.model.params_b
    family = catalog.models().get(result.model.id or "") or None
    for task in catalog.tasks():
        if task.kind != kind and not (
            task.kind == Kind.rendering and kind in (Kind.video, Kind.simulation)
        ):
            continue
        if task.modes and mode not in task.modes:
            continue
        if task.families and (family is None or family.family not in task.families):
            continue
        if params <= task.max_params_b:
            return task
    return None


def suggest_fixes(w: Workload, named: Option) -> list[str]:
    """Changes that would make the workload fit the named card, each checked by running
    the estimate again. Codes, rendered by templates."""
    gpu = catalog.gpus()[named.gpu_id]
    limit = gpu.usable_vram_bytes * (1 - HEADROOM)
    tries: list[tuple[str, Workload]] = []
    if not w.mode.is_training:
        for fmt in ("fp8", "int8", "awq-4bit", "q4_k_m"):
            if gpu.fp8_supported or fmt != "fp8":
                # A diffusion pipeline's text encoders are quantized too (the engine keeps
                # them 16-bit unless told); an LLM ignores the field.
                update = {"weights_format": fmt, "text_encoder_format": fmt}
                tries.append((f"quantize:{fmt}", w.model_copy(update=update)))
        if (w.context_tokens or 4096) > 2048:
            tries.append(
                (
                    "shorter_context:2048",
                    w.model_copy(
                        update={"context_tokens": 2048, "prompt_tokens": None, "new_tokens": None}
                    ),
                )
            )
    else:
        if w.mode in (Mode.full, Mode.pretrain):
            tries.append(("lora", w.model_copy(update={"mode": Mode.lora})))
        if w.mode != Mode.qlora:
            tries.append(
                ("qlora", w.model_copy(update={"mode": Mode.qlora, "weights_format": "nf4"}))
            )
        if not w.gradient_checkpointing:
            tries.append(("checkpointing", w.model_copy(update={"gradient_checkpointing": True})))
        if (w.batch_size or 1) > 1:
            tries.append(("batch:1", w.model_copy(update={"batch_size": 1})))
        tries.append(("offload", w.model_copy(update={"cpu_offload": "optimizer"})))
        # Sharded weights on the CPU, gathered a layer at a time (FSDP-QLoRA's 70B-on-2x24GB
        # recipe; PEFT FSDP guide measured 19.6 GB/GPU with it, 35.6 GB without).
        sharded = (
            w.parallelism
            if w.parallelism in (Parallelism.zero3, Parallelism.fsdp)
            else Parallelism.fsdp
        )
        tries.append(
            (
                "offload_params",
                w.model_copy(update={"cpu_offload": "params", "parallelism": sharded}),
            )
        )
    for count in (2, 4, 8):
        if count > w.num_gpus:
            tries.append((f"cards:{count}", _workload_for(w, count)))
    fixes = []
    for code, trial in tries:
        if code.startswith("cards:") and any(f.startswith("cards:") for f in fixes):
            continue  # the fewest cards that fit is the advice
        est = estimate(trial).estimate
        if est is not None and est.total_bytes <= limit:
            fixes.append(code)
    return fixes[:4]


def recommend_query(
    parsed: ParsedQuery, default_currency: str = "CNY", prices_file: Path | None = None
) -> Recommendation:
    """`recommend` for a parsed one-line query: its named card and budget applied. The one
    path from a user's text to an answer, shared by the CLI and the bot."""
    if parsed.workload is None:
        raise ValueError("recommend_query needs a parsed workload")
    b = parsed.budget
    return recommend(
        parsed.workload,
        gpu_id=parsed.gpu_id,
        budget_per_hour=b.amount if b and b.per_hour else None,
        budget_total=b.amount if b and not b.per_hour else None,
        currency=b.currency if b else default_currency,
        prices_file=prices_file,
    )


def summary(rec: Recommendation) -> dict:
    """A few fields to store with a question (history, /stats)."""
    pick = rec.named or rec.cheapest
    est = rec.result.estimate
    return {
        "model": rec.result.model.id or rec.result.model.name,
        "gpu": pick.gpu_id if pick else None,
        "count": pick.count if pick else None,
        "fits": pick.fits if pick else None,
        "total_bytes": est.total_bytes if est else None,
    }
