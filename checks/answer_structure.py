"""Answer invariants on the recommendation itself: its headline figure, picks, verdict, grid,
budget, prices and guide line agree (rules headline_figure, pick_vs_warning, fits_verdict,
grid, budget, count_priced, guide_direction, headroom_policy in checks/answer_invariants.py)."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.models.choices import Mode
from advisor.recommend import Recommendation
from advisor.recommend.fix_candidates import VLLM_FLAG_CODES
from advisor.recommend.pricing import card_prices
from checks.answer_facts import (
    HEADROOM,
    MIN_FREE,
    Problem,
    hardware_conflicts,
    near_enough,
    pick_state,
    picks,
)


def check_structure(parsed, rec: Recommendation) -> list[Problem]:  # noqa: ANN001
    """What the recommendation itself says."""
    out: list[Problem] = []
    h, e = rec.headline, (rec.setup or rec.result).estimate
    if h is not None and e is not None:
        if h.per_gpu_bytes != e.total_bytes:
            out.append(("headline_figure", f"headline {h.per_gpu_bytes} vs terms {e.total_bytes}"))
        if not e.low_bytes <= e.total_bytes <= e.high_bytes:
            out.append(("band", f"{e.low_bytes}..{e.high_bytes} vs {e.total_bytes}"))
        v = rec.verdict
        if v is not None and v.state == "split":
            if h.fits or pick_state(h) not in ("fits", "tight"):
                out.append(("fits_verdict", f"split verdict beside fits={h.fits}, {pick_state(h)}"))
        elif v is not None and v.state != "blocked" and v.state != pick_state(h, v):
            out.append(("fits_verdict", f"verdict {v.state}, figure says {pick_state(h, v)}"))
        if v is not None and v.state != "blocked":
            # tight only with the lazy CUDA context: judged and shown on that figure
            need = v.lazy_context_bytes or h.per_gpu_bytes
            shown = 1 - need / h.usable_bytes
            if abs(shown - v.headroom_fraction) > 0.0051:
                out.append(("fits_verdict", f"headroom {v.headroom_fraction} vs {shown:.3f}"))
    for o in picks(rec):
        gpu = catalog.gpus()[o.gpu_id]
        if o.blocked or any(p.severity == "error" for p in o.notes):
            out.append(("pick_vs_warning", f"pick {o.gpu_id} blocked {o.blocked}"))
        for p in rec.pitfalls:
            about = p.params.get("gpu") == gpu.name  # at this count, when it names one
            if (
                p.severity == "error"
                and about
                and p.params.get("count", str(o.count)) == str(o.count)
            ):
                out.append(("pick_vs_warning", f"pick {o.gpu_id} beside ⛔ {p.code}"))
        for fact in hardware_conflicts(rec, gpu):
            out.append(("pick_vs_warning", f"pick {o.gpu_id}: {fact}"))
        if not o.fits or pick_state(o) == "no_fit":
            out.append(("fits_verdict", f"pick {o.gpu_id} does not fit"))
        if o.fits != (o.per_gpu_bytes <= o.usable_bytes * (1 - MIN_FREE)) and o.count == 1:
            out.append(("fits_verdict", f"pick {o.gpu_id} fits={o.fits}"))
        if o.risky != (pick_state(o) == "tight"):
            out.append(("fits_verdict", f"pick {o.gpu_id} risky={o.risky} vs {pick_state(o)}"))
        out += _priced(rec, o)
    if rec.named is not None and rec.verdict is not None and rec.verdict.state != "blocked":
        for fact in hardware_conflicts(rec, catalog.gpus().get(rec.named.gpu_id) or _mem_card()):
            out.append(("pick_vs_warning", f"named {rec.named.gpu_id} judged runnable: {fact}"))
    out += _guide(rec)
    out += grid_order(rec)
    out += _budget(parsed, rec)
    out += _pitfalls_agree(rec)
    return out


def _pitfalls_agree(rec: Recommendation) -> list[Problem]:
    """The "Watch out" list says of the headline setup what its verdict says."""
    h, v = rec.headline, rec.verdict
    if h is None or v is None:
        return []
    out: list[Problem] = []
    for p in rec.pitfalls:
        same = p.params.get("gpu") == h.gpu_name and p.params.get("count") == str(h.count)
        if p.code == "oom" and same and v.state in ("fits", "tight", "split"):
            out.append(("fits_verdict", f"⛔ not enough VRAM beside a {v.state} verdict"))
        if p.code == "tight_headroom" and v.state == "fits":
            out.append(("fits_verdict", "a tight-headroom warning beside ✅ fits"))
    one_card = [o for o in picks(rec) if o.count == 1 and o.fits and not o.blocked]
    for p in rec.pitfalls:
        if p.code == "full_finetune_multi_gpu" and one_card:
            out.append(("claim_vs_pick", f"'does not fit one card' beside 1× {one_card[0].gpu_id}"))
    return out


_STATE_RANK = {"ok": 0, "tight": 1, "no": 2}  # split / unsupported / beyond: not ordered


def _bits(fmt: str) -> float:
    spec = catalog.find_format(fmt)
    return spec.bits if spec is not None else 16.0


def _scope(fmt: str) -> str:
    """What a format's bits cover: "all" (GGUF, bf16) or "linear" (fp8, AWQ: embeddings and
    lm_head stay 16-bit), so nominal bits order formats only within one scope."""
    spec = catalog.find_format(fmt)
    return spec.scope if spec is not None else "all"


def grid_order(rec: Recommendation) -> list[Problem]:
    """Fewer bits never need more memory, a longer length never less: a cell worse than a
    wider format's at the same length (INT4 128k ⚠️ beside FP8 128k ✅), or better than a
    shorter length's in its row, judges a different job than its neighbours."""
    cells = [c for c in rec.grid if c.state in _STATE_RANK]
    # A 4-bit base can train with more memory than a 16-bit one: bitsandbytes' 4-bit layers
    # (before 0.43.2) keep their input for backward. Only inference is ordered by width.
    by_width = not (rec.setup or rec.result).workload.mode.is_training
    out: list[Problem] = []
    for a in cells:
        for b in cells:
            worse = _STATE_RANK[a.state] > _STATE_RANK[b.state]
            if (
                by_width
                and a.context_tokens == b.context_tokens
                and _bits(a.format) < _bits(b.format)
                and _scope(a.format) == _scope(b.format)
                and worse
            ):
                out.append(
                    ("grid", f"{a.format} {a.context_tokens} {a.state} vs {b.format} {b.state}")
                )
            if a.format == b.format and a.context_tokens < b.context_tokens and worse:
                out.append(
                    (
                        "grid",
                        f"{a.format} {a.context_tokens} {a.state} vs {b.context_tokens} {b.state}",
                    )
                )
    out += grid_asked_cell(rec)
    out += grid_vs_as_asked(rec)
    return out


def grid_vs_as_asked(rec: Recommendation) -> list[Problem]:
    """An answer that says the asked setup runs out of memory as asked never marks the asked
    format at the asked length or longer as running with the runtime's defaults: a cell
    that runs only with vLLM's lean flags says so (GridCell.lean, the grid's "*")."""
    s, v = rec.setup or rec.result, rec.verdict
    if not rec.grid or v is None or v.state != "no_fit" or s.estimate is None:
        return []
    if rec.recipe or rec.budget_fix or s.estimate.runtime is None:
        return []
    if s.estimate.runtime.value not in ("vllm", "sglang"):
        return []
    w = s.workload
    assumed = {a.field: a.value for a in s.assumed}
    field = "seq_len" if w.mode.is_training else "context_tokens"
    length = getattr(w, field) or assumed.get(field)
    fmt = w.weights_format or assumed.get("weights_format")
    if not length or not fmt:
        return []
    return [
        ("grid", f"{c.format} {c.context_tokens} {c.state} runs as is, the verdict: OOM as asked")
        for c in rec.grid
        if c.format == str(fmt)
        and c.context_tokens >= int(length)
        and c.state in ("ok", "tight")
        and not c.lean
    ]


def grid_asked_cell(rec: Recommendation) -> list[Problem]:
    """The cell of the asked format at the asked length is the verdict above it."""
    s, v = rec.setup or rec.result, rec.verdict
    if not rec.grid or v is None or s.estimate is None or rec.recipe or rec.budget_fix:
        return []
    w = s.workload
    assumed = {a.field: a.value for a in s.assumed}
    field = "seq_len" if w.mode.is_training else "context_tokens"
    length = getattr(w, field) or assumed.get(field)
    fmt = w.weights_format or assumed.get("weights_format")
    want = {"fits": "ok", "tight": "tight", "no_fit": "no", "split": "split"}.get(v.state)
    # the grid judges a vLLM cell that runs only with the lean flag set as ⚠️ (grid.py),
    # where the verdict above says "does not fit as asked; fits with these flags"
    fixes = [v.fix] if v.fix else []
    lean = any(f.partition(":")[0] in VLLM_FLAG_CODES for f in fixes + list(rec.fixes))
    accepted = {"ok", "tight"} if lean else {want}
    shown = {c.format for c in rec.grid} | (
        {"bf16"} if "fp16" in {c.format for c in rec.grid} else set()
    )
    if fmt and w.mode not in (Mode.full, Mode.pretrain) and str(fmt) not in shown:
        return [("grid", f"the answer's {fmt} has no row in {sorted(shown)}")]
    for c in rec.grid:
        same_fmt = c.format == fmt or (c.format == "fp16" and fmt == "bf16")
        warned = "beyond_model_context" in {p.code for p in rec.pitfalls}
        if c.state == "beyond" and warned:
            continue  # the answer says the asked length is past the model's window
        if (
            same_fmt
            and length
            and c.context_tokens == int(length)
            and want
            and c.state not in accepted
        ):
            return [("grid", f"cell {c.format} {c.context_tokens} {c.state} vs verdict {v.state}")]
    return []


def _budget(parsed, rec: Recommendation) -> list[Problem]:  # noqa: ANN001
    """Picks within the budget asked, unless the answer says nothing runs within it."""
    if rec.over_budget or parsed.budget is None:
        return []
    out: list[Problem] = []
    for o in picks(rec):
        p = o.price_per_hour
        if rec.budget_per_hour is not None and p is not None and p.amount > rec.budget_per_hour:
            out.append(("budget", f"{o.gpu_id} at {p.amount}/h over {rec.budget_per_hour}/h"))
        total = rec.budget_total
        if total is not None and o.job_cost is not None and o.job_cost > total + 0.01:
            out.append(("budget", f"{o.gpu_id}: job {o.job_cost} over {total}"))
    return out


def _mem_card() -> GpuSpec:
    return GpuSpec(
        id="?",
        name="?",
        vendor="?",
        segment="?",
        architecture="?",
        vram_gb=1,
        usable_vram_gib=1,
        memory_bandwidth_gbs=0,
        spec_confidence="unknown",
        spec_read_date="-",
    )


def _priced(rec: Recommendation, o) -> list[Problem]:  # noqa: ANN001
    out: list[Problem] = []
    p = o.price_per_hour
    if p is None:
        return [("count_priced", f"pick {o.gpu_id} has no price")]
    card = card_prices(None, rec.currency, rec.region).get(o.gpu_id)
    if card is None or card.platform != p.platform:
        out.append(("count_priced", f"{o.gpu_id}: priced on {p.platform}, listed elsewhere"))
    elif abs(card.amount * o.count - p.amount) > 0.011 * o.count:
        out.append(("count_priced", f"{o.count}× {o.gpu_id}: {p.amount} vs {card.amount}"))
    job = o.job_cost
    if (
        job is not None
        and o.train_hours is not None
        and not near_enough(job, p.amount * o.train_hours)
    ):
        out.append(("cost", f"{o.gpu_id}: {job} vs {p.amount}×{o.train_hours}"))
    return out


def _guide(rec: Recommendation) -> list[Problem]:
    task, h = rec.guide_task, rec.headline
    if task is None or h is None:
        return []
    lo, _, hi = task.cards.partition("-")
    if not int(lo) <= h.count <= int(hi or lo):
        return [("guide_direction", f"guide {task.id} cards {task.cards} vs {h.count}")]
    if (rec.setup or rec.result).estimate is None:
        return []
    gb = h.per_gpu_bytes / 1e9
    if not task.vram_gb[0] / 2 <= gb <= task.vram_gb[1]:
        return [("guide_direction", f"guide {task.id} {task.vram_gb} GB vs {gb:.1f} GB")]
    return []


def check_policy(rec: Recommendation) -> list[Problem]:
    """The headroom policy on the recommendation itself: each pick has 20% free as it
    stands, or a change (`fix`) whose figure (`fixed_bytes`) leaves 20%."""
    out: list[Problem] = []
    for o in picks(rec):
        if o.per_gpu_bytes <= o.usable_bytes * (1 - HEADROOM):
            continue
        if o.fix is None or o.fixed_bytes is None:
            out.append(("headroom_policy", f"pick {o.gpu_id}: {o.headroom_fraction} and no change"))
        elif o.fixed_bytes > o.usable_bytes * (1 - HEADROOM):
            out.append(("headroom_policy", f"pick {o.gpu_id}: {o.fix} leaves under 20%"))
    return out
