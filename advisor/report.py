"""The public JSON shape of an answer (CLI `--json`, stored history summaries).

Byte values are integers named `*_bytes`. Keys documented in the README are public:
other tools read them.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from advisor.models.estimate import Term
from advisor.models.result import EstimateResult, ResolvedModel
from advisor.recommend import Option, Price, Recommendation


def estimate_json(result: EstimateResult) -> dict[str, Any]:
    est = result.estimate
    out: dict[str, Any] = {
        "workload": result.workload.model_dump(mode="json", exclude_none=True),
        "model": _model_json(result.model),
        "assumptions": result.assumptions,
        "estimate": None,
    }
    if result.model.arch is not None:
        out["model"]["arch"] = result.model.arch.model_dump(mode="json", exclude_none=True)
    if est is not None:
        out["estimate"] = {
            "per_gpu": est.per_gpu,
            "num_gpus": est.num_gpus,
            "allocated_bytes": est.allocated_bytes,
            "total_bytes": est.total_bytes,
            "low_bytes": est.low_bytes,
            "high_bytes": est.high_bytes,
            # how far measured setups like this ran (high_bytes adds the widening for a
            # source nobody measured); what a near-the-limit decision uses
            "measured_high_bytes": est.decision_high_bytes,
            "confidence": est.confidence.value,
            "breakdown": est.breakdown,
            "terms": _TERMS.dump_python(est.terms),
        }
    return out


def _model_json(m: ResolvedModel) -> dict[str, Any]:
    """The resolved model as JSON, its architecture apart (`estimate_json`)."""
    return _RESOLVED_MODEL.dump_python(m, mode="json", exclude={"arch"})


# pydantic's serializers for the engine's dataclass results: every field, as a model's
# model_dump gives it.
_RESOLVED_MODEL = TypeAdapter(ResolvedModel)
_TERMS = TypeAdapter(list[Term])


def _price_json(p: Price | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "amount": p.amount,
        "currency": p.currency,
        "platform": p.platform,
        "source_date": p.source_date,
        "listed_amount": p.listed_amount,  # set when converted from the listing's currency
        "listed_currency": p.listed_currency,
        "in_region": p.in_region,
    }


def option_json(o: Option) -> dict[str, Any]:
    return {
        "gpu_id": o.gpu_id,
        "gpu_name": o.gpu_name,
        "count": o.count,
        "fits": o.fits,
        "risky": o.risky,
        "multi_node": o.multi_node,
        "per_gpu_bytes": o.per_gpu_bytes,
        "usable_bytes": o.usable_bytes,
        "headroom_fraction": o.headroom_fraction,
        "price_per_hour": _price_json(o.price_per_hour),
        "parallelism": o.parallelism,
        "blocked": o.blocked,
        "fix": o.fix,
        "fixed_bytes": o.fixed_bytes,
        "notes": [p.code for p in o.notes],
        "decode_tokens_per_s": o.decode_tokens_per_s,
        "decode_total_tokens_per_s": o.decode_total_tokens_per_s,
        "concurrency": o.concurrency,
        "train_hours": o.train_hours,
        "job_cost": o.job_cost,
        "images_per_min": o.images_per_min,
        "audio_realtime_x": o.audio_realtime_x,
        "video_seconds": o.video_seconds,
        "audio_realtime_at_least": o.audio_at_least,
        "why": o.why,
    }


def recommendation_json(rec: Recommendation, lang: str = "en") -> dict[str, Any]:
    out = estimate_json(rec.result)
    picks = [o for o in (rec.cheapest, rec.best_value, rec.fastest) if o is not None]
    seen: set[tuple[str, int]] = set()
    recs = []
    for o in picks + rec.options:
        key = (o.gpu_id, o.count)
        if key in seen:
            continue
        seen.add(key)
        recs.append(option_json(o))
        if len(recs) >= 8:
            break
    out["recommendations"] = recs
    out["named_gpu"] = option_json(rec.named) if rec.named else None
    out["headline"] = option_json(rec.headline) if rec.headline else None
    out["verdict"] = rec.verdict.model_dump() if rec.verdict else None
    # the other cards named as alternatives ("3090或4090"): each as `named_gpu` + `verdict`
    out["also_named"] = [
        {"named_gpu": option_json(a.option), "verdict": a.verdict.model_dump()} for a in rec.also
    ]
    out["fixes"] = rec.fixes
    out["over_budget"] = rec.over_budget
    out["budget_fix"] = rec.budget_fix
    out["recipe"] = rec.recipe
    out["count_asked"] = rec.count_asked
    out["excluded"] = rec.excluded
    out["free"] = [t["id"] for t in rec.free]
    out["grid"] = [c.model_dump() for c in rec.grid]
    out["pitfalls"] = [
        {"code": p.code, "severity": p.severity, "message": p.message(lang)} for p in rec.pitfalls
    ]
    out["guide_task"] = rec.guide_task.id if rec.guide_task else None
    return out
