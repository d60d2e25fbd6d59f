"""What the answer invariants judge by, restated apart from the engine: the guide's headroom,
the hardware facts a card cannot get round, the picks of a recommendation and the state each
one is in (checks/answer_invariants.py lists the rules)."""

from __future__ import annotations

from advisor.catalog import GpuSpec
from advisor.models.choices import Kind, Runtime
from advisor.recommend import Recommendation

HEADROOM = 0.20  # the guide's "VRAM misestimate" rule, restated here on purpose
MIN_FREE = 0.01  # under 1% free is shown as "0% headroom": not a card that runs the job
Problem = tuple[str, str]

# Hardware facts from vendor and project docs, restated apart from capabilities.toml:
# (what the job uses, the card it cannot run on).
SERVING = (Runtime.vllm, Runtime.sglang, Runtime.tgi)


def hardware_conflicts(rec: Recommendation, gpu: GpuSpec) -> list[str]:
    """What the job asks that this card cannot do, by facts written here: vLLM/SGLang on
    anything older than Volta or off CUDA/ROCm, AWQ kernels on Volta, FP8 W8A8 without FP8
    tensor cores, fp8 checkpoints in a serving engine before Ampere, bf16 training named on
    a card without bf16, FlashAttention-2 before Ampere, FP4 before Blackwell."""
    s = rec.setup or rec.result
    w = s.workload
    fmt = w.weights_format or ""
    out = []
    if gpu.vendor != "NVIDIA" and gpu.architecture == "?":
        return out  # a card known by its memory only
    runtime = w.runtime or (s.estimate.runtime if s.estimate else None)  # asked, else assumed
    serving = runtime in SERVING
    if serving and gpu.vendor == "NVIDIA" and gpu.cc < 7.0:
        out.append("serving engine before Volta")
    if serving and gpu.vendor not in ("NVIDIA", "AMD"):
        out.append("serving engine off CUDA/ROCm")
    if serving and fmt == "awq-4bit" and gpu.vendor == "NVIDIA" and gpu.cc < 7.5:
        out.append("AWQ in a serving engine on Volta")
    if fmt == "fp8-w8a8" and not gpu.fp8_supported:
        out.append("FP8 W8A8 without FP8 tensor cores")
    if serving and fmt == "fp8" and gpu.vendor == "NVIDIA" and gpu.cc < 8.0:
        out.append("fp8 checkpoint in a serving engine before Ampere")
    if fmt == "nvfp4" and gpu.cc < 10.0:
        out.append("FP4 before Blackwell")
    if w.mode.is_training and w.compute_dtype == "bf16" and not gpu.bf16_supported:
        out.append("bf16 training without bf16")
    attention = getattr(w, "attention", None)
    if attention is not None and attention.value == "flash" and gpu.cc < 8.0:
        out.append("FlashAttention-2 before Ampere")
    if fmt in ("nf4", "nf4-dq", "fp4") and gpu.vendor != "NVIDIA":
        out.append("bitsandbytes off CUDA")
    return out


def picks(rec: Recommendation) -> list:
    return [o for o in (rec.cheapest, rec.best_value, rec.fastest) if o is not None]


def pick_state(o, verdict=None) -> str:  # noqa: ANN001
    """fits / tight / no_fit / blocked by the figure; a verdict that is tight only with
    the lazy CUDA context (PyTorch 2.1+) is judged on its figure with that context."""
    if o.blocked:
        return "blocked"
    need = getattr(verdict, "lazy_context_bytes", None) or o.per_gpu_bytes
    if need > o.usable_bytes * (1 - MIN_FREE):
        return "no_fit"
    return "tight" if need > o.usable_bytes * (1 - HEADROOM) else "fits"


def near_enough(shown: float, computed: float) -> bool:
    """Equal as rounded to the cent (and a tenth of a percent for large sums)."""
    return abs(shown - computed) <= 0.011 + 0.001 * abs(computed)


def is_llm(rec: Recommendation) -> bool:
    return rec.result.model.kind == Kind.llm
