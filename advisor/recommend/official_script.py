"""A video or image model whose authors ship their own script (Wan's generate.py), asked with
no program named: the answer is for the diffusers pipeline, as its assumptions say, and this
note sizes the authors' script with the memory flags their README measures
(data/official_scripts.toml), since the two differ (the official VAE decode is not tiled)."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from advisor import catalog
from advisor.catalog import DATA_DIR, GpuSpec
from advisor.memory import GIB, estimate
from advisor.models.choices import Kind, Offload
from advisor.models.result import EstimateResult
from advisor.types import Pitfall

_SCRIPT_FORMATS = (None, "bf16", "fp16", "fp32")


@cache
def _scripts() -> tuple[dict[str, Any], ...]:
    with (DATA_DIR / "official_scripts.toml").open("rb") as fh:
        return tuple(tomllib.load(fh)["script"])


def _belongs(script: dict[str, Any], family: str, model_id: str) -> bool:
    """The script is the model's authors': its family, and its ids where the entry names them
    (a family can hold other authors' models: SkyReels-V2 runs Wan's transformer)."""
    ids = script.get("ids")
    return script["family"] == family and (not ids or model_id.startswith(tuple(ids)))


def official_script_note(base: EstimateResult, gpu: GpuSpec | None) -> Pitfall | None:
    """The authors' script's figure for an inference asked without a program, or None."""
    w = base.workload
    if base.model.kind != Kind.diffusion or w.mode.is_training or base.estimate is None:
        return None
    if w.runtime is not None or w.framework is not None:
        return None  # a program named: the answer is for it
    if w.weights_format not in _SCRIPT_FORMATS:
        return None  # a quantized checkpoint: the authors' script loads the 16-bit one
    spec = catalog.models().get(base.model.id or "")
    script = next(
        (s for s in _scripts() if spec is not None and _belongs(s, spec.family, spec.id)), None
    )
    if script is None:
        return None
    update = dict(script["set"])
    if "cpu_offload" in update:
        update["cpu_offload"] = Offload(update["cpu_offload"])
    run = estimate(w.model_copy(update=update))
    if run.estimate is None:
        return None
    need = run.estimate.total_bytes
    usable = gpu.usable_vram_bytes if gpu is not None else None
    code = "official_script"
    if usable is not None and need <= usable:
        code += "_fits"
    elif usable is not None:
        # over the card: the tiled diffusers run the answer sizes is the way, where it fits
        code += "_over_tiled" if base.estimate.total_bytes <= usable else "_over"
    return Pitfall(
        code=code,
        severity="info" if code.endswith("_fits") else "warning",
        params={
            "script": script["name"],
            "gib": f"{need / GIB:.1f}",
            "usable": f"{usable / GIB:.1f}" if usable is not None else "",
            "gpu": gpu.name if gpu is not None else "",
        },
    )
