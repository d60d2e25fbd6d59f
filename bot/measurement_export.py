"""`python -m bot export-measurements --out FILE`: the stored "I ran it" reports as measured
cases in the schema of ../shared/eval/vram_cases.json (its README), so that
`python bench/accuracy.py --cases FILE` scores the engine on them.

No user or chat ids, no names, no text the member wrote: a case is the question as the
engine read it, the card, and the figure. Its source is the report's id and date. An
out-of-memory report is a bound (`oom_at`, the card's usable memory); "where read" is the
schema's `measured.what`. Each case also carries `engine_workload`, the workload exactly as
the engine estimated it (checks/cases.py reads it instead of mapping the schema's
fields, which cannot express every setting a question can).
"""

from __future__ import annotations

import json
from pathlib import Path

from advisor import catalog
from advisor.memory import estimate
from advisor.models.choices import Kind
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload
from bot.measurement_store import Measurement, read_measurements

GIB = 2**30
SOURCE_REPO = "gpu-advisor-bot/reports"  # one source group in bench/accuracy.py
CATEGORY_KINDS = {Kind.llm: "llm", Kind.diffusion: "diffusion", Kind.classic: "classic"}


def _model_section(model: ResolvedModel) -> dict:
    """The case's model as the engine resolved it, with its architecture's fields."""
    arch = model.arch.model_dump() if model.arch is not None else {}
    return {
        "name": model.id or model.name,
        "family": None,
        "params_b": model.params_b,
        "active_params_b": model.active_params_b,
        "arch": {
            "layers": arch.get("layers"),
            "hidden": arch.get("hidden"),
            "heads": arch.get("heads"),
            "kv_heads": arch.get("kv_heads"),
            "head_dim": arch.get("head_dim"),
            "intermediate": arch.get("intermediate"),
            "vocab": arch.get("vocab"),
            "experts": arch.get("experts"),
            "experts_per_token": arch.get("experts_per_token"),
            "source": model.source or "advisor catalog",
        },
    }


def _workload_section(w: Workload, m: Measurement) -> dict:
    """The case's workload in the schema's fields (what it cannot express is in
    `engine_workload`)."""
    assumed = dict(m.assumed)
    return {
        "mode": w.mode.value,
        "weights_precision": w.weights_format or assumed.get("weights_format"),
        "compute_dtype": w.compute_dtype,
        "mixed_precision": w.mixed_precision,
        "batch_size": w.batch_size,
        "prompt_tokens": w.prompt_tokens,
        "new_tokens": w.new_tokens,
        "seq_len": w.seq_len or w.context_tokens,
        "image_width": w.image_width,
        "image_height": w.image_height,
        "images_per_prompt": w.images_per_prompt,
        "denoise_steps": w.denoise_steps,
        "optimizer": w.optimizer.value if w.optimizer else None,
        "gradient_checkpointing": w.gradient_checkpointing,
        "attention": w.attention.value if w.attention else None,
        "lora_rank": w.lora_rank,
        "lora_targets": w.lora_targets,
        "gradient_accumulation": w.gradient_accumulation,
        "num_gpus": w.num_gpus,
        "parallelism": w.parallelism.value if w.parallelism else None,
        "cpu_offload": w.cpu_offload.value != "none",
        "kv_cache_dtype": w.kv_cache_dtype,
        "framework": m.runtime,
    }


def _notes(m: Measurement) -> str:
    """How the report came in and what the engine said at the time, in words."""
    return (
        f"Reported through the bot on {m.gpu_count}x {m.gpu_id}; the question as read: "
        f"{m.canonical}; runtime {m.runtime or 'none'}; assumed: "
        + (", ".join(f"{k} = {v}" for k, v in m.assumed) or "nothing")
        + (f"; answered for {m.recipe}" if m.recipe else "")
        + f"; catalog {m.catalog_version}. At the report the engine said "
        f"{m.estimate_bytes / GIB:.2f} GiB ({m.view} view), outcome {m.outcome}."
        + (
            " Not scorable: nvidia-smi shows the share of the card the serving engine "
            "reserves at start (gpu_memory_utilization), not what the job needs."
            if m.view == "share"
            else ""
        )
    )


def measurement_case(m: Measurement) -> dict:
    w = Workload.model_validate(m.workload)
    result = estimate(w)
    model = result.model
    training = w.mode.is_training
    kind = CATEGORY_KINDS.get(model.kind, model.kind.value)
    bound = None
    if m.kind == "oom":
        assert m.limit_bytes is not None
        bound = {"kind": "oom_at", "limit_gib": round(m.limit_bytes / GIB, 3), "tokens": None}
    figure = (
        "out of memory"
        if m.kind == "oom"
        else f"{(m.measured_bytes or 0) / GIB:.2f} GiB per card ({m.measured_what})"
    )
    card = catalog.gpus().get(m.gpu_id)
    return {
        "id": f"bot-report-{m.id}",
        "category": f"{kind}_{'training' if training else 'inference'}",
        "model": _model_section(model),
        "workload": _workload_section(w, m),
        "engine_workload": m.workload,
        "gpu": card.name if card is not None else m.gpu_id,
        "measured": {
            "value_gib": round(m.measured_bytes / GIB, 4) if m.measured_bytes else None,
            "what": m.measured_what,
            "bound": bound,
        },
        # nvidia-smi beside vLLM/SGLang shows the share they reserve, not what the job needs:
        # the eval README's "cannot fairly be predicted from the description"
        "scorable": m.view != "share",
        "confidence": "medium",
        "unit_ambiguous": m.unit_ambiguous,
        "source": {
            "repo": SOURCE_REPO,
            "report_id": m.id,
            "date": m.created_at[:10],
            "title": f"'I ran it' report {m.id}",
        },
        "quote": figure,
        "notes": _notes(m),
    }


def export_measurements(database: Path, out: Path) -> int:
    """Write every stored report as a case; returns how many."""
    cases = [measurement_case(m) for m in read_measurements(database)]
    out.write_text(json.dumps(cases, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return len(cases)
