"""Purchase plans: "预算8万配一台服务器", "$12k workstation for llama 70b", "买4张4090".

A plan within the budget from the dated purchase catalog (data/purchase_prices.toml): which
cards and how many (used where buying used is the norm, e.g. the 3090, with a new-only plan
beside it), the box they need (PSU watts from the cards' TDP, slots and cooling from three
cards up, host RAM), notes for China (export rule, China SKUs, the GeForce licence's
data-centre clause), what the plan runs (capability rows on those cards, advisor/fit.py), and
the months until buying beats renting the same cards at a stated utilisation, electricity
included. The plan's total (cards and box) never exceeds the budget.

Choosing: with a model named, the cheapest plan on which it fits with the guide's headroom;
without one, the most memory the budget buys (then bandwidth, then the lower price).
"""

from __future__ import annotations

from typing import Any

from advisor import catalog
from advisor.kinds.purchase_answer import CURRENCIES, Plan, PurchaseAnswer
from advisor.kinds.purchase_costs import CardPrice, buy_or_rent, card_prices, china_sku_for
from advisor.kinds.purchase_costs import purchase_catalog as _catalog
from advisor.kinds.purchase_fit import fits
from advisor.kinds.purchase_jobs import deciding_job, heaviest_job, job_fits, model_jobs
from advisor.kinds.purchase_plan import (
    OWN_PC_MAX_CARDS,
    best_option,
    box_for,
    build_plan,
    cheapest_total,
    max_cards,
)
from advisor.memory.stacks import chunked_by_default
from advisor.models.choices import Kind, Mode, Optimizer
from advisor.models.workload import Workload
from advisor.parse import Budget, ParsedQuery
from advisor.recommend.fix_candidates import DIFFUSION_QUANTIZE_FORMATS


def _lighter(workload: Workload | None) -> list[tuple[Workload, list[str]]]:
    """The same job in the lighter forms people buy hardware for, tried in order when it fits
    no plan as asked, each with the answer's flags that say so: a model served with no
    precision named, the 4-bit weights (AWQ / GPTQ / GGUF Q4); a full fine-tune on AdamW,
    the changes the fit answer names that keep every parameter trained at about the same
    speed (recommend/fix_candidates.py): bitsandbytes' paged AdamW 8-bit (optimizer states a quarter
    the size), then also a chunked cross-entropy (no full fp32 logits)."""
    if workload is None:
        return []
    if not workload.mode.is_training:
        if workload.weights_format is not None:
            return []
        four = [(workload.model_copy(update={"weights_format": "int4"}), ["four_bit"])]
        if workload.kind != Kind.diffusion:
            return four
        # A diffusion pipeline: the fit answer's first format change, fp8 weights and text
        # encoders (recommend/fix_candidates.py DIFFUSION_QUANTIZE_FORMATS; published fp8
        # checkpoints, ComfyUI float8_e4m3fn), its low-VRAM rungs (model offload) tried
        # with it by purchase_fit.fit_recipe, before 4-bit.
        first = DIFFUSION_QUANTIZE_FORMATS[0]  # "fp8": the form the answer's "fp8_weights" names
        lighter = {"weights_format": first, "text_encoder_format": first}
        return [(workload.model_copy(update=lighter), ["fp8_weights"]), *four]
    adamw = workload.optimizer in (None, Optimizer.adamw)
    if workload.mode not in (Mode.full, Mode.pretrain) or not adamw:
        return []
    eight = workload.model_copy(update={"optimizer": Optimizer.paged_adamw_8bit})
    out = [(eight, ["optimizer_8bit"])]
    own_chunked = chunked_by_default(workload.framework)  # data/training_stacks.toml [loss]
    if workload.kind in (None, Kind.llm) and not workload.chunked_loss and not own_chunked:
        chunked = eight.model_copy(update={"chunked_loss": True})
        out.append((chunked, ["optimizer_8bit", "chunked_loss"]))
    return out


def _card_only(parsed: ParsedQuery, limit: float | None, currency: str) -> bool:
    """Cards for the asker's own PC ("预算3000买显卡"): a card-buying word, no machine word
    ("服务器", "workstation"), and no budget of a machine's size (a lab's 10万 for "买卡"
    buys a machine)."""
    if "card_only" not in parsed.cues or "purchase_weak" in parsed.cues:
        return False
    floor = _catalog()["box"][0][currency.lower()] * 2  # a budget well above a desktop's rest
    return limit is None or limit < floor


def _named_card(
    parsed: ParsedQuery, currency: str, limit: float | None, card_only: bool
) -> tuple[CardPrice, int] | None:
    """The card the line names to buy, when the catalog prices it and the budget (if any)
    covers it: new before used."""
    bought = _bought_and_rented(parsed)
    if bought is None:
        return None
    (gpu_id, count), _ = bought
    sku = china_sku_for(gpu_id) if currency == "CNY" else None
    entries = [sku] if sku else sorted(_priced_as(gpu_id), key=lambda e: e.condition != "new")
    for entry in entries:
        gpu = catalog.gpus()[entry.gpu_id]
        most = OWN_PC_MAX_CARDS if card_only else max_cards(gpu)
        if not 1 <= count <= most:
            return None
        total = entry.price(currency) * count + box_for(count, currency, card_only)[1]
        if limit is None or total <= limit:
            return entry, count
    return None


def _priced_as(gpu_id: str) -> list[CardPrice]:
    """The price entries of a card, else of the same card in another form factor (same name
    before its form, same memory): "buy an H100" reads the H100 SXM5, sold only inside 8-GPU
    HGX servers; a single H100 bought is the PCIe card, priced so and said so."""
    own = [e for e in card_prices() if e.gpu_id == gpu_id]
    if own:
        return own
    gpus = catalog.gpus()
    asked = gpus.get(gpu_id)
    if asked is None:
        return []
    stem = asked.name.split()[0]
    return [
        e
        for e in card_prices()
        if (g := gpus.get(e.gpu_id)) is not None
        and g.name.split()[0] == stem
        and g.vram_gb == asked.vram_gb
    ]


def _unpriced(parsed: ParsedQuery) -> str | None:
    """The name of the card the line names to buy when its own form has no price."""
    bought = _bought_and_rented(parsed)
    if bought is None or any(e.gpu_id == bought[0][0] for e in card_prices()):
        return None
    gpu = catalog.gpus().get(bought[0][0])
    return gpu.name if gpu is not None else None


def _bought_and_rented(
    parsed: ParsedQuery,
) -> tuple[tuple[str, int], tuple[str, int] | None] | None:
    """((card, count) to buy, (card, count) to rent instead or None). One card named: it is
    bought. Two with a rent word ("buy 2x 4090 or rent an A100", "租A100还是买两张4090"): the
    one with a count is bought (people count what they buy), else the one named with the
    buying word (the second when the rent word comes first). More: no named plan."""
    if parsed.gpu_id is None:
        return None
    first = (parsed.gpu_id, parsed.gpu_count or 1)
    if not parsed.other_cards:
        return first, None
    if "rent" not in parsed.cues or len(parsed.other_cards) != 1:
        return None
    other_id, other_count = parsed.other_cards[0]
    second = (other_id, other_count or 1)
    if parsed.gpu_count is None and other_count is not None:
        return second, first
    if parsed.gpu_count is None and "rent_first" in parsed.cues:
        return second, first
    return first, second


def _fits_any(best: tuple[CardPrice, int, float], workload: Workload) -> bool:
    return fits(workload, catalog.gpus()[best[0].gpu_id], best[1])


def answer(parsed: ParsedQuery, currency: str) -> PurchaseAnswer:
    """The plan, its buy-or-rent figures at the hours a day the line states (each plan's
    break-even again at that utilisation), else at the catalog's."""
    result = _with_job_fits(parsed, _answer(parsed, currency))
    if parsed.hours_per_day is None:
        return result
    share = parsed.hours_per_day / 24

    def again(plan: Plan | None) -> Plan | None:
        if plan is None:
            return None
        args = (plan.total, plan.rent_per_hour, plan.wall_watts, result.currency, share)
        return plan.model_copy(update=buy_or_rent(*args, plan.resale_value))

    update = {"utilization": share, "utilization_stated": True, "plan": again(result.plan)}
    update |= {"alternative": again(result.alternative), "roomier": again(result.roomier)}
    return result.model_copy(update=update)


def _jobs(
    parsed: ParsedQuery, currency: str
) -> tuple[Workload | None, list[Workload], list[tuple[str, str, float]]]:
    """The job that decides the plan, every job the line names (none: one job, the line's
    workload) and each job's label, task and figure as asked."""
    workload = parsed.workload
    if workload is None or not (parsed.jobs or parsed.second_job):
        return workload, [], []
    if parsed.jobs:
        workload, runs, jobs = heaviest_job(workload, parsed.jobs)
    else:
        workload, runs, jobs = model_jobs(workload, parsed.second_job, parsed.more_jobs)  # type: ignore[arg-type]
    return _deciding_job(parsed, currency, runs, workload), runs, jobs


def _deciding_job(
    parsed: ParsedQuery, currency: str, runs: list[Workload], heaviest: Workload
) -> Workload:
    """The job whose cheapest plan in the budget (in a lighter form where needed) costs most."""
    budget = parsed.budget if parsed.budget and not parsed.budget.per_hour else None
    limit = budget.amount if budget else None
    card_only = _card_only(parsed, limit, currency)

    def cost(run: Workload) -> float:
        for form in (run, *(lighter for lighter, _ in _lighter(run))):
            best = best_option(currency, limit, form, True, card_only)
            if best is not None and _fits_any(best, form):
                return best[2]
        return float("inf")

    return deciding_job(runs, heaviest, cost)


def _with_job_fits(parsed: ParsedQuery, result: PurchaseAnswer) -> PurchaseAnswer:
    """Several jobs: how each runs on the plan's cards (purchase_jobs.job_fits)."""
    if not result.jobs or result.plan is None:
        return result
    sized, runs, _ = _jobs(parsed, result.currency)
    line = result.plan.lines[0]
    fits = job_fits(runs, catalog.gpus()[line.gpu_id], line.count, _lighter)
    index = runs.index(sized) if sized in runs else 0
    return result.model_copy(update={"job_fits": fits, "sized_job": index})


def _answer_fields(
    parsed: ParsedQuery, budget: Budget | None, priced_in: str
) -> tuple[Workload | None, dict[str, Any]]:
    """The job the plan is sized for (the heaviest of several) and the fields every
    purchase answer carries: the budget and currency, the break-even terms, the job's kind
    and its model's name."""
    be = _catalog()["break_even"]
    base: dict[str, Any] = {
        "budget_amount": budget.amount if budget else None,
        "budget_currency": (budget.currency if budget.currency_named else priced_in)
        if budget
        else None,
        "currency": priced_in,
        "china": priced_in == "CNY",
        "utilization": be["utilization"],
        "horizon_months": be["horizon_months"],
        "buy_below_months": be["buy_below_months"],
        "electricity_per_kwh": be[
            "electricity_cny_per_kwh" if priced_in == "CNY" else "electricity_usd_per_kwh"
        ],
    }
    workload, runs, jobs = _jobs(parsed, priced_in)
    if jobs:
        base["jobs"] = jobs
        base["job_users"] = [r.users if not r.mode.is_training else None for r in runs]
    base["training"] = workload is not None and workload.mode.is_training
    # a bare "量化": the file and program the plan is sized for (parse/platform.py)
    base["quantized_as"] = next(
        (tuple(a.split(" = ", 1)) for a in parsed.assumed if a.startswith("quantized_")), None
    )
    spec = catalog.models().get(workload.model) if workload and workload.model else None
    base["model_name"] = (
        spec.name
        if spec
        else (f"{workload.params_b:g}B" if workload and workload.params_b else None)
    )
    return workload, base


def _named_answer(
    parsed: ParsedQuery,
    named: tuple[CardPrice, int],
    priced_in: str,
    workload: Workload | None,
    card_only: bool,
    base: dict[str, Any],
) -> PurchaseAnswer:
    """ "买一台4090还是租", "buy 4x 3090": the cards asked about, priced, for a lighter recipe
    where the job as asked runs on none of them."""
    if workload is not None and not _fits_any((*named, 0.0), workload):
        for lighter, flags in _lighter(workload):
            if _fits_any((*named, 0.0), lighter):
                workload = lighter
                base |= dict.fromkeys(flags, True)
                break
    bought = _bought_and_rented(parsed)
    rented = bought[1] if bought else None
    china = priced_in == "CNY"
    plan = build_plan(named[0], named[1], priced_in, workload, china, card_only, rented)
    base["unpriced"] = _unpriced(parsed)
    if bought and named[0].china_sku_of == bought[0][0]:
        # "买一张4090" in yuan: the card sold in China, priced and named (4090 D)
        base["sold_as"] = catalog.gpus()[bought[0][0]].name
    return PurchaseAnswer(problem=None, plan=plan, named_cards=True, **base)


def _answer(parsed: ParsedQuery, currency: str) -> PurchaseAnswer:
    budget = parsed.budget if parsed.budget and not parsed.budget.per_hour else None
    priced_in = currency
    if budget is not None and budget.currency_named and budget.currency in CURRENCIES:
        priced_in = budget.currency
    workload, base = _answer_fields(parsed, budget, priced_in)
    if budget is not None and budget.currency not in CURRENCIES and budget.currency_named:
        return PurchaseAnswer(problem="unknown_currency", **base)
    if budget is not None and budget.amount <= 0:
        return PurchaseAnswer(problem="not_positive", **base)
    limit = budget.amount if budget else None
    china = priced_in == "CNY"
    card_only = _card_only(parsed, limit, priced_in)
    named = _named_card(parsed, priced_in, limit, card_only)
    if named is not None:
        return _named_answer(parsed, named, priced_in, workload, card_only, base)
    base["unpriced"] = _unpriced(parsed)
    if budget is None and workload is None:
        return PurchaseAnswer(problem="no_budget", **base)
    best = best_option(priced_in, limit, workload, True, card_only)
    if workload is not None and (best is None or not _fits_any(best, workload)):
        for lighter, flags in _lighter(workload):
            found = best_option(priced_in, limit, lighter, True, card_only)
            if found is not None and _fits_any(found, lighter):
                base["as_asked"] = _as_asked(priced_in, limit, workload, china, card_only)
                workload, best = lighter, found
                base |= dict.fromkeys(flags, True)
                break
    if best is None:
        cheapest = cheapest_total(priced_in, card_only)
        return PurchaseAnswer(problem="too_small", cheapest_total=cheapest, **base)
    plan = build_plan(best[0], best[1], priced_in, workload, china, card_only)
    alternative = None
    if best[0].condition == "used":
        new = best_option(priced_in, limit, workload, False, card_only)
        if new is not None:
            alternative = build_plan(new[0], new[1], priced_in, workload, china, card_only)
    invoice_first = "institution" in parsed.cues
    base["invoice_first"] = invoice_first
    if invoice_first and alternative is not None and alternative.fits_workload is not False:
        # an institution buys with an invoice: the new cards lead, the used plan after them
        # (unless no new plan in the budget runs the job: the used one leads, said so)
        plan, base["used_plan"], alternative = alternative, plan, None
    roomier = _roomier(plan, limit, priced_in, workload, china, card_only, not invoice_first)
    # a budget the best machine uses a tenth of: more than one box can hold, judged on the
    # most the budget buys ("$40k workstation for sdxl" spends $2,300 on SDXL, yet $38,760
    # on four cards in one box: it read "plan a cluster")
    capped = limit is not None and (roomier or plan).total * 10 < limit
    return PurchaseAnswer(
        problem=None, plan=plan, alternative=alternative, capped=capped, roomier=roomier, **base
    )


# A plan for the job as asked this far over the budget is named beside the lighter plan
# within it ("预算20万 14b全参微调": 2x RTX PRO 6000 on 8-bit AdamW; on AdamW, 3x in a
# workstation, 6% over): the asker may stretch the budget rather than change the recipe
AS_ASKED_OVER_SHARE = 0.25


def _as_asked(
    currency: str, limit: float | None, workload: Workload | None, china: bool, card_only: bool
) -> Plan | None:
    """The cheapest plan that runs the job as asked, over the budget by at most
    AS_ASKED_OVER_SHARE of it."""
    if workload is None or limit is None:
        return None
    best = best_option(currency, None, workload, True, card_only)
    if best is None or best[2] > limit * (1 + AS_ASKED_OVER_SHARE):
        return None
    return build_plan(best[0], best[1], currency, workload, china, card_only)


# A model's cheapest plan that leaves more than this share of the budget unspent: the plan
# the whole budget buys is shown beside it ("$8000 workstation for stable diffusion and
# LLMs" was answered with one RTX 3060 and nothing else)
ROOMIER_BELOW_SHARE = 0.5


def _roomier(
    plan: Plan,
    limit: float | None,
    currency: str,
    workload: Workload | None,
    china: bool,
    card_only: bool,
    used: bool = True,
) -> Plan | None:
    """The most memory the budget buys (as with no model named), beside the cheapest plan
    that runs the model, when that plan spends less than half the budget; `used`: used
    cards allowed (not for an institution's purchase, which needs an invoice)."""
    if workload is None or limit is None or plan.total >= limit * ROOMIER_BELOW_SHARE:
        return None
    best = best_option(currency, limit, None, used, card_only)
    if best is None or catalog.gpus()[best[0].gpu_id].vram_gb * best[1] <= plan.vram_gb:
        return None
    return build_plan(best[0], best[1], currency, workload, china, card_only)
