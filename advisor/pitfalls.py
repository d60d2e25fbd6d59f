"""Pitfalls raised by a workload and the card picked for it.

Each is a code, a severity and parameters; the wording in both languages lives in
`data/pitfalls.toml`, so templates and the JSON output share it.
"""

from __future__ import annotations

import tomllib
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from advisor.catalog import DATA_DIR, GpuSpec, find_format
from advisor.models import EstimateResult, Kind, Mode

if TYPE_CHECKING:
    from advisor.recommend import Option

GIB = 2**30


class Pitfall(BaseModel):
    code: str
    severity: str  # error | warning | info
    params: dict[str, str] = {}

    def message(self, lang: str = "en") -> str:
        text = _texts()[self.code]["zh" if lang == "zh" else "en"]
        return text.format(**self.params)


@cache
def _texts() -> dict[str, dict[str, Any]]:
    with (DATA_DIR / "pitfalls.toml").open("rb") as fh:
        return tomllib.load(fh)


def _p(code: str, **params: object) -> Pitfall:
    return Pitfall(
        code=code,
        severity=_texts()[code]["severity"],
        params={k: str(v) for k, v in params.items()},
    )


def _gib(b: float) -> str:
    return f"{b / GIB:.1f} GiB"


def find_pitfalls(
    result: EstimateResult, gpu: GpuSpec | None, pick: Option | None, cheapest: Option | None
) -> list[Pitfall]:
    out: list[Pitfall] = []
    w, model, est = result.workload, result.model, result.estimate
    if est is None:
        out.append(_p("no_formula"))
        return out
    if gpu is not None and pick is not None:
        if not pick.fits:
            out.append(
                _p("oom", need=_gib(pick.per_gpu_bytes), gpu=gpu.name, have=_gib(pick.usable_bytes))
            )
        elif pick.risky:
            out.append(_p("tight_headroom", headroom=f"{pick.headroom_fraction * 100:.0f}%"))
        if (
            cheapest is not None
            and cheapest.gpu_id != pick.gpu_id
            and pick.fits
            and pick.price_per_hour
            and cheapest.price_per_hour
            and pick.headroom_fraction > 0.6
            and not w.mode.is_training
            and pick.price_per_hour.amount > 2 * cheapest.price_per_hour.amount
        ):
            out.append(
                _p(
                    "overprovisioned",
                    gpu=gpu.name,
                    used=_gib(pick.per_gpu_bytes),
                    cheaper=cheapest.gpu_name,
                )
            )
        if pick.train_hours is not None and pick.train_hours > 72:
            out.append(_p("slow_compute", hours=f"{pick.train_hours:.0f}"))
        if gpu.cc and gpu.cc < 8.0 and gpu.vendor == "NVIDIA":
            out.append(_p("no_bf16", gpu=gpu.name))
            if model.kind == Kind.llm:
                out.append(_p("no_flash_attention", gpu=gpu.name))
        fmt = find_format(w.weights_format) if w.weights_format else None
        if fmt is not None and fmt.id == "fp8" and not gpu.fp8_supported:
            out.append(_p("no_fp8", gpu=gpu.name))
        if gpu.cc >= 10.0 and gpu.segment != "datacenter" or gpu.id.startswith("rtx-5"):
            out.append(_p("blackwell_cuda"))
        if pick.count > 1 and not gpu.has_nvlink:
            out.append(_p("no_nvlink", gpu=gpu.name))
        if gpu.china_variant_note and "China" in gpu.name:
            out.append(_p("export_variant", gpu=gpu.name, note=gpu.china_variant_note))
    arch = model.arch
    if arch is not None and arch.experts:
        out.append(
            _p(
                "moe_total_params",
                total=f"{model.params_b:g}B",
                active=f"{model.active_params_b:g}B",
            )
        )
    kv = est.breakdown.get("kv_cache", 0)
    if kv > 0.3 * est.allocated_bytes and kv > 2 * GIB:
        out.append(_p("long_context_kv", kv=_gib(kv)))
    framework = (w.framework or "").lower()
    if framework == "vllm":
        out.append(_p("vllm_preallocates"))
    if framework in ("transformers", "hf") and not w.mode.is_training:
        out.append(_p("hf_generate_kv"))
    if w.mode == Mode.qlora:
        out.append(_p("qlora_host_ram", size=_gib(model.params_b * 2e9)))
    fmt = find_format(w.weights_format) if w.weights_format else None
    if fmt is not None and fmt.bits < 4.0:
        out.append(_p("low_bit_quality", fmt=fmt.id))
    if (
        w.mode in (Mode.full, Mode.pretrain)
        and model.params_b >= 3
        and w.num_gpus == 1
        and (pick is None or not pick.fits or pick.count > 1)
    ):
        out.append(_p("full_finetune_multi_gpu", params=f"{model.params_b:g}B"))
    if model.params_b >= 1:
        out.append(
            _p("host_ram_disk", size=_gib(est.breakdown.get("weights", 0) * max(w.num_gpus, 1)))
        )
    out.append(_p("cuda_compat"))
    return out
