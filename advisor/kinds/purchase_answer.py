"""What a purchase answer holds: the plan (cards, box, what it runs), the new-only
alternative, what the whole budget buys, the buy-or-rent figures, the notes that apply and
the answer's JSON. The planning itself is advisor/kinds/purchase.py."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.kinds.capability import CapabilityRow

CURRENCIES = ("CNY", "USD")


class PlanLine(BaseModel):
    gpu_id: str
    gpu_name: str
    count: int
    unit_price: float
    condition: str
    price_converted: bool
    price_basis: str  # launch | street | used | list
    launch_price: float | None = None  # beside a street price
    price_source: str
    price_date: str


class Plan(BaseModel):
    lines: list[PlanLine]
    currency: str
    box_kind: str  # desktop | workstation | server
    box_price: float
    total: float
    vram_gb: float
    psu_watts: int
    host_ram_gb: int
    wall_watts: int  # under load: cards' TDP + the host
    blower_cards: bool  # 3+ cards side by side: blower / 2-slot cards or risers
    fits_workload: bool | None  # None: no model named
    # the low-VRAM recipe the model runs with on these cards (small_card_recipes.toml code,
    # as the fit answer for the same card says), None: as asked
    recipe: str | None = None
    runs: list[CapabilityRow]
    rent_per_hour: float | None  # the same cards rented (or `rent_name`'s), cheapest listing
    rent_name: str | None = None  # "buy 2x 4090 or rent an A100": the card rented instead
    rent_per_year: float | None = None  # renting them a year at the stated utilisation
    break_even_months: float | None  # None: no rental listing of the card
    # buy | rent | close (pays off within the horizon, after the buy threshold) | None
    verdict: str | None = None
    # hours a day the cards must be busy to pay off within the horizon / the buy threshold
    hours_per_day_horizon: float | None = None
    hours_per_day_buy: float | None = None
    resale_share: float | None = None  # the cards' resale after the horizon, share of launch
    resale_value: float | None = None  # None: not counted (used / non-GeForce cards)
    export_controlled: bool
    china_sku: bool
    china_sku_name: str | None = None  # the China SKU sold in place of an export-controlled card
    geforce: bool  # GeForce driver licence: no data-centre deployment


class PurchaseAnswer(BaseModel):
    budget_amount: float | None
    budget_currency: str | None
    currency: str  # what the plan is priced in
    problem: str | None  # not_positive | unknown_currency | too_small | no_budget | None
    cheapest_total: float | None = None  # too_small: the least a plan costs
    capped: bool = False  # more budget than one 8-card machine uses: a cluster
    model_name: str | None = None
    # several jobs named ("32b推理和7b lora微调", "wan2.1 视频生成和flux lora训练"): each
    # (size "32B" or model name, Mode value, GiB as asked), in the order written; the plan is
    # sized for the one needing the most memory (purchase.heaviest_job / model_jobs)
    jobs: list[tuple[str, str, float]] = []
    # each job's people served ("serve llama-3.3-70b to 20 users and sdxl lora training": 20
    # and None), in the order of `jobs`
    job_users: list[int | None] = []
    # each job on the plan's cards: (fits with the guide's headroom, low-VRAM recipe or None,
    # the lighter form it needs: None, "fp8_weights", "four_bit" or "optimizer_8bit")
    job_fits: list[tuple[bool, str | None, str | None]] = []
    sized_job: int = 0  # the job the plan is sized for (its index in `jobs`)
    four_bit: bool = False  # the model did not fit at 16 bits: planned for 4-bit weights
    # a diffusion pipeline did not fit at 16 bits: planned for fp8 weights and text encoders
    fp8_weights: bool = False
    # a full fine-tune did not fit on AdamW: planned with an 8-bit optimizer (paged AdamW 8-bit)
    optimizer_8bit: bool = False
    chunked_loss: bool = False  # with it, a chunked cross-entropy (no full fp32 logits)
    # beside a lighter plan (four_bit, optimizer_8bit): the job as asked, a little over budget
    as_asked: Plan | None = None
    # the card named to buy when the plan prices the China SKU sold in its place ("买4090"
    # in yuan: the 4090 is export-controlled, the 4090 D is what is sold new)
    sold_as: str | None = None
    # a bare "量化" read as ("quantized_local", "Q4_K_M") or ("quantized_served", "AWQ")
    quantized_as: tuple[str, str] | None = None
    named_cards: bool = False  # the plan is the cards the line named ("买4张4090"), priced
    # The card named to buy when no price of it is listed: priced as its other form factor
    # (named_cards) or not planned (the plan is from the cards with prices), said so
    unpriced: str | None = None
    plan: Plan | None = None
    alternative: Plan | None = None  # new cards only, beside a plan with used ones
    # An institution's purchase (a lab, a school, a research group, a budget in 万): ranked
    # new cards with an invoice first; the plan with used cards, cheaper, after it
    invoice_first: bool = False
    used_plan: Plan | None = None
    # A model named that a small part of the budget runs: what the whole budget buys beside it
    roomier: Plan | None = None
    china: bool  # the notes for buying in China apply
    utilization: float
    utilization_stated: bool = False  # the hours a day are the user's ("每天用8小时")
    electricity_per_kwh: float
    horizon_months: int = 36  # the verdict's horizon: the cards' depreciation period
    buy_below_months: int = 18  # paying off within this is a clear "buy"
    training: bool = False  # the line names a training job (no serving engine's split)

    @property
    def odd_tp_count(self) -> bool:
        """A plan whose card count vLLM / SGLang tensor parallelism cannot use for the usual
        models: the count must divide the attention heads (64 for Qwen2.5-72B and
        Llama-3.1-70B, config.json), so only a power of two does. Said beside a plan not
        meant for training, with the splits that run on it (pitfalls.toml tp_split)."""
        if self.plan is None or self.training:
            return False
        n = sum(ln.count for ln in self.plan.lines)
        return n > 1 and n & (n - 1) != 0

    @property
    def used_cards(self) -> bool:
        """A plan with used cards: no invoice for an institution's purchasing, said so."""
        return self.plan is not None and any(ln.condition == "used" for ln in self.plan.lines)

    def trade(self, other: Plan | None) -> dict[str, float] | None:
        """What another plan the answer names trades against the plan: memory per card (the
        smallest card's) and in all, and the cards' dense 16-bit tensor throughput summed, as a ratio
        to the plan's (data/gpus.toml); None where a card's throughput is not listed."""
        if other is None or self.plan is None:
            return None
        gb, plan_gb = _card_gb(other), _card_gb(self.plan)
        compute, plan_compute = _tensor_tflops(other), _tensor_tflops(self.plan)
        if gb is None or plan_gb is None or not compute or not plan_compute:
            return None
        return {
            "gb": gb,
            "plan_gb": plan_gb,
            "total_gb": _total_gb(other),
            "plan_total_gb": _total_gb(self.plan),
            "compute": compute / plan_compute,
        }

    def notes(self) -> list[str]:
        """What the answer warns about, as codes (the JSON's `notes`)."""
        p = self.plan
        if p is None:
            return []
        out = []
        if self.used_cards:
            out.append("used_no_invoice")
        if self.china and p.geforce:
            out.append("geforce_datacenter_licence")
        if self.china and p.export_controlled:
            out.append("export_controlled")
        if p.china_sku:
            out.append("china_sku")
        if self.odd_tp_count:
            out.append("tp_count")
        return out

    def public_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "purchase": {
                "budget": {"amount": self.budget_amount, "currency": self.budget_currency},
                "currency": self.currency,
                "problem": self.problem,
                "plan": [
                    {
                        "gpu_id": ln.gpu_id,
                        "count": ln.count,
                        "unit_price": ln.unit_price,
                        "condition": ln.condition,
                        "price_basis": ln.price_basis,
                        "launch_price": ln.launch_price,
                    }
                    for ln in (plan.lines if plan else [])
                ],
                "box_price": plan.box_price if plan else None,
                "total": plan.total if plan else None,
                "break_even_months": plan.break_even_months if plan else None,
                "verdict": plan.verdict if plan else None,
                "horizon_months": self.horizon_months,
                "hours_per_day_to_break_even": plan.hours_per_day_horizon if plan else None,
                "electricity_per_kwh": self.electricity_per_kwh,
                "resale_counted": bool(plan and plan.resale_value),
                "resale_value": plan.resale_value if plan else None,
                "resale_share": plan.resale_share if plan else None,
                "notes": self.notes(),
                "psu_watts": plan.psu_watts if plan else None,
                "host_ram_gb": plan.host_ram_gb if plan else None,
                "fits_workload": plan.fits_workload if plan else None,
                "four_bit": self.four_bit,
                "fp8_weights": self.fp8_weights,
                "optimizer_8bit": self.optimizer_8bit,
                "chunked_loss": self.chunked_loss,
                "as_asked": _lines_json(self.as_asked),
                "as_asked_total": self.as_asked.total if self.as_asked else None,
                "named_cards": self.named_cards,
                "runs": [r.model_dump() for r in plan.runs] if plan else [],
                "utilization": self.utilization,
                "utilization_stated": self.utilization_stated,
                "capped": self.capped,
                "alternative_total": self.alternative.total if self.alternative else None,
                "ranking": "new_with_invoice_first" if self.invoice_first else "cheapest_first",
                "used_plan": _lines_json(self.used_plan),
                "used_plan_total": self.used_plan.total if self.used_plan else None,
                "rent_instead": plan.rent_name if plan else None,
                "unpriced": self.unpriced,
                "sold_as": self.sold_as,
                "roomier": _lines_json(self.roomier),
                "roomier_total": self.roomier.total if self.roomier else None,
                "alternative": (
                    [
                        {
                            "gpu_id": ln.gpu_id,
                            "count": ln.count,
                            "unit_price": ln.unit_price,
                            "condition": ln.condition,
                        }
                        for ln in self.alternative.lines
                    ]
                    if self.alternative
                    else None
                ),
            }
        }


def _lines_json(plan: Plan | None) -> list[dict[str, Any]] | None:
    if plan is None:
        return None
    return [
        {"gpu_id": ln.gpu_id, "count": ln.count, "unit_price": ln.unit_price} for ln in plan.lines
    ]


def _card_gb(plan: Plan) -> float | None:
    gpus = catalog.gpus()
    sizes = [gpus[ln.gpu_id].vram_gb for ln in plan.lines if ln.gpu_id in gpus]
    return min(sizes) if len(sizes) == len(plan.lines) else None


def _total_gb(plan: Plan) -> float:
    gpus = catalog.gpus()
    return sum(ln.count * gpus[ln.gpu_id].vram_gb for ln in plan.lines if ln.gpu_id in gpus)


def _tensor_tflops(plan: Plan) -> float | None:
    gpus = catalog.gpus()
    total = 0.0
    for ln in plan.lines:
        gpu = gpus.get(ln.gpu_id)
        if gpu is None or not gpu.fp16_bf16_tensor_dense_tflops:
            return None
        total += ln.count * gpu.fp16_bf16_tensor_dense_tflops
    return total
