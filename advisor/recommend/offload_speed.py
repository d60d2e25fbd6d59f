"""What CPU offload adds to a diffusion pipeline's time per image: the weights it moves over
PCIe (data/capabilities.toml [offload_transfer]). Model offload moves each component on and
off the GPU once per call; sequential offload streams the whole denoiser (and its
ControlNets) at every denoiser call, so its cost grows with the steps."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.constraints import offload_transfer
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.choices import Offload
from advisor.models.result import EstimateResult

PLAIN = ("fp32", "fp16", "bf16")


def offload_bytes_per_image(result: EstimateResult, steps: int) -> tuple[str, float]:
    """(offload mode, bytes moved per image) for a diffusion inference estimate; ("", 0)
    without an offload mode (ComfyUI and the WebUIs keep what fits resident)."""
    w = result.workload
    mode = w.cpu_offload
    spec = catalog.models().get(result.model.id or "")
    if mode not in (Offload.model, Offload.sequential) or spec is None or spec.diffusion is None:
        return "", 0.0
    d = spec.diffusion
    fmt = w.weights_format or _assumed(result, "weights_format") or spec.default_format or "bf16"
    te_fmt = w.text_encoder_format or (fmt if fmt in PLAIN else "bf16")
    den = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, fmt)
    cn_params = d.controlnet_params_b or d.denoiser_params_b * 0.5
    cn = w.controlnets * cn_params * 1e9 * 2
    te = (
        sum(estimate_weight_bytes(x * 1e9, None, te_fmt) for x in d.text_encoders_params_b)
        if w.text_encoders_on_gpu
        else 0.0
    )
    vae = d.vae_params_b * 1e9 * (4 if d.vae_force_upcast else 2)
    cfg = w.guidance if w.guidance is not None else d.guidance
    calls = steps * (2 if cfg and not d.cfg_batched else 1)
    per_call = den + cn + te + vae if mode == Offload.model else (den + cn) * calls + te + vae
    images = (w.images_per_prompt or 1) * (w.batch_size or 1)
    return mode.value, per_call / images


def offload_seconds(mode: str, moved_bytes: float, gpu: GpuSpec) -> float:
    """Seconds to move `moved_bytes` under `mode` on `gpu`: the measured rate, scaled down
    on a slower PCIe link than the one measured."""
    if not mode or moved_bytes <= 0:
        return 0.0
    t = offload_transfer()
    rate = float(t[f"{mode}_gb_per_s"]) * 1e9
    link = link_gb_per_s(gpu.pcie)
    if link is not None:
        rate *= min(1.0, link / float(t["measured_link_gb_per_s"]))
    return moved_bytes / rate


@cache
def link_gb_per_s(pcie: str | None) -> float | None:
    """GB/s per direction of a card's host link ("4.0 x16"); None when unknown."""
    m = re.match(r"\s*(\d\.\d)\s*x\s*(\d+)", pcie or "")
    lanes = offload_transfer()["lane_gb_per_s"]
    if m is None or m.group(1) not in lanes:
        return None
    return float(lanes[m.group(1)]) * int(m.group(2))


def _assumed(result: EstimateResult, field: str) -> str | None:
    return next((a.value for a in result.assumed if a.field == field), None)
