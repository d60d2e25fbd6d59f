"""What a card brings to a workload, whatever the workload: what it lacks (bf16,
FlashAttention, NVLink), an OOM or a tight fit, Apple's wired-memory limit, a used server
board's cooling and stack, an export variant's note, the share a colocated RL engine needs of
it, a slow training time on it."""

from __future__ import annotations

import math
import tomllib
from functools import cache

from advisor import catalog
from advisor.architectures import architecture_of
from advisor.catalog import DATA_DIR, GpuSpec
from advisor.constraints import (
    advisories,
    apple_raised_limit_gb,
    blockers,
    nvlinked,
    speed_constants,
    tp_ok,
)
from advisor.memory.runtimes import LLAMACPP_FAMILY
from advisor.memory.runtimes.whisper import own_kernels
from advisor.models.choices import Kind, Runtime
from advisor.models.result import EstimateResult
from advisor.pitfalls.pitfall import GIB, gib_text, pitfall
from advisor.types import Option, Pitfall, pitfall_texts
from advisor.units import headroom


@cache
def gpu_notes() -> dict[str, dict[str, str]]:
    """Catalog notes on export variants in both languages (data/gpu_notes.toml)."""
    with (DATA_DIR / "gpu_notes.toml").open("rb") as fh:
        return tomllib.load(fh)


def card_pitfalls(result: EstimateResult, gpu: GpuSpec, pick: Option) -> list[Pitfall]:
    """What applies to running this workload on `pick` (a card and a count): shown beside a
    pick, and in the answer's list for the headline setup. By family: what the card lacks
    (constraints' blockers and advisories), whether it fits (`_fit_notes`), a slow training
    time, the kernels it cannot run (`_kernel_notes`), several cards' links
    (`_multi_card_notes`), a colocated RL engine's share, a used server board, an export
    variant."""
    missing = blockers(gpu, result)
    out = [pitfall(code, gpu=gpu.name) for code in missing]
    if not missing:
        out += [pitfall(code, gpu=gpu.name) for code in advisories(gpu, result)]
    out += _fit_notes(result, gpu, pick)
    if pick.train_hours is not None and pick.train_hours > slow_hours(pick.count):
        out.append(pitfall("slow_compute", hours=f"{pick.train_hours:.0f}", count=pick.count))
    fa2_blocked = "flash_attention_needs_ampere" in {p.code for p in out}
    out += _kernel_notes(result, gpu, fa2_blocked)
    out += _multi_card_notes(result, gpu, pick)
    out += _rollout_share(result, gpu, pick)
    out += _old_server_card(gpu)
    out += _fp16_vae(result, gpu)
    note = gpu_notes().get(gpu.id)
    if note is not None:
        lang_params = {"note": {"zh": note["zh"], "en": note["en"]}}
        out.append(pitfall("export_variant", lang_params, gpu=gpu.name))
    return out


def _fit_notes(result: EstimateResult, gpu: GpuSpec, pick: Option) -> list[Pitfall]:
    """Why a pick that does not fit does not (tensor parallelism refused, an OOM, Ollama's
    own layer split), or a tight fit's headroom."""
    arch = result.model.arch
    split_refused = not tp_ok(result, pick.count)
    if not pick.fits and split_refused and pick.per_gpu_bytes <= pick.usable_bytes and arch:
        # memory is not what stops it, tensor parallelism is (recommend.verdict's "split"):
        # saying OOM beside a figure under the card's memory contradicted the answer. Only
        # where the count does not divide the heads: a pick short of the card's last 1%
        # (recommend.headroom.MIN_FREE) or a layer split (llama.cpp's, any count) is memory;
        # QwQ-32B's 40/8 heads on 2 cards under llama.cpp at 15.7 of 15.8 GiB were called
        # "2 does not divide".
        heads = f"{arch.heads}/{arch.kv_heads_}"
        return [
            pitfall(
                "tp_split",
                count=pick.count,
                gpu=gpu.name,
                need=gib_text(pick.per_gpu_bytes),
                heads=heads,
            )
        ]
    if not pick.fits and not _under_raised_limit(gpu, pick):
        # Ollama splits the layers itself when they do not all fit (`ollama ps`: "CPU/GPU"):
        # slower, not an OOM; saying OOM beside the "-ngl / num_gpu" fix contradicted it
        runs_split = result.estimate is not None and result.estimate.runtime == Runtime.ollama
        return [
            pitfall(
                "oom_ollama" if runs_split else "oom",
                need=gib_text(pick.per_gpu_bytes),
                gpu=gpu.name,
                count=pick.count,
                have=gib_text(pick.usable_bytes),
            )
        ]
    if pick.risky:
        return [pitfall("tight_headroom", headroom=headroom(pick.headroom_fraction))]
    return []


def _kernel_notes(result: EstimateResult, gpu: GpuSpec, fa2_blocked: bool) -> list[Pitfall]:
    """What the card's generation cannot run or needs: no bf16 for 16-bit inference, no
    FlashAttention-2 before Ampere, Apple's wired-memory limit, Blackwell's CUDA."""
    w, model = result.workload, result.model
    out: list[Pitfall] = []
    inference = not w.mode.is_training and model.kind in (Kind.llm, Kind.diffusion)
    runtime = result.estimate.runtime if result.estimate is not None else None
    # llama.cpp loads GGUF types (F16 where 16-bit) and has its own attention kernel: the
    # bf16 flags of vLLM / transformers and FlashAttention-2 are not what it runs
    # CTranslate2 (faster-whisper) has its own kernels: no torch_dtype, SDPA or FA2 either
    gguf = runtime in LLAMACPP_FAMILY or own_kernels(w.framework)
    # an fp32 model (openai-whisper's, SAM's) has no bf16 to replace
    fmt = w.weights_format or next(
        (a.value for a in result.assumed if a.field == "weights_format"), None
    )
    half = fmt != "fp32"
    if gpu.vendor == "NVIDIA" and not gpu.bf16_supported and inference and not gguf and half:
        out.append(pitfall("no_bf16_inference", gpu=gpu.name))
    old_card = gpu.vendor == "NVIDIA" and 0 < gpu.cc < 8.0
    if old_card and model.kind == Kind.llm and not fa2_blocked and not gguf:
        out.append(pitfall("no_flash_attention", gpu=gpu.name))
    if gpu.vendor == "Apple":
        out.append(_apple_wired_limit(gpu))
    if gpu.cc >= 10.0 and gpu.segment != "datacenter" or gpu.id.startswith("rtx-5"):
        out.append(pitfall("blackwell_cuda"))
    return out


def _multi_card_notes(result: EstimateResult, gpu: GpuSpec, pick: Option) -> list[Pitfall]:
    """Several cards: no NVLink where the split all-reduces, and transformers' layer split
    running one card at a time."""
    w = result.workload
    runtime = result.estimate.runtime if result.estimate is not None else None
    out: list[Pitfall] = []
    layer_split = (
        pick.count > 1
        and not w.mode.is_training
        and getattr(runtime, "value", runtime) == "transformers"
        and pick.parallelism == "tp"
    )
    by_layers = layer_split or pick.parallelism == "layer"  # llama.cpp's --split-mode layer
    if pick.count > 1 and not nvlinked(gpu, pick.count) and not by_layers:
        # a split by layers has no all-reduce: the missing NVLink costs it nothing
        out.append(pitfall("no_nvlink", gpu=gpu.name))
    if layer_split:
        # transformers' device_map="auto" puts whole layers on each card: one card works at
        # a time, which is what a user moving to several cards for speed should know
        out.append(pitfall("layer_split_sequential"))
    return out


def _under_raised_limit(gpu: GpuSpec, pick: Option) -> bool:
    """A Mac whose GPU share, raised by the sysctl apple_wired_limit names, holds the pick:
    not an OOM (the headline names the sysctl)."""
    top = apple_raised_limit_gb(gpu)
    return top is not None and pick.per_gpu_bytes <= top * GIB * 0.99


def _fp16_vae(result: EstimateResult, gpu: GpuSpec) -> list[Pitfall]:
    """A VAE that overflows in fp16 (SDXL's: force_upcast in its vae/config.json) on a card
    without bf16, where it runs in fp16: NaN / black images unless the re-scaled VAE the
    catalog names (vae_fp16_fix) or an fp32 decode is used."""
    spec = catalog.models().get(result.model.id or "")
    fixed = spec.diffusion.vae_fp16_fix if spec is not None and spec.diffusion else None
    if fixed is None or gpu.bf16_supported:
        return []  # bf16 has fp32's range; fp16 asked on such a card: diffusers upcasts
    return [pitfall("vae_fp16_overflow", gpu=gpu.name, vae=fixed)]


def _old_server_card(gpu: GpuSpec) -> list[Pitfall]:
    """A used server board in a desktop (cooling, power plug, BIOS, display), a dual-GPU
    board (K80), and an architecture whose software stopped (Kepler)."""
    texts = pitfall_texts()
    out = []
    if gpu.id in texts["passive_datacenter_card"]["cards"]:
        out.append(pitfall("passive_datacenter_card", gpu=gpu.name))
    if gpu.id in texts["dual_gpu_board"]["cards"]:
        out.append(pitfall("dual_gpu_board", gpu=gpu.name))
    arch = architecture_of(gpu)
    if arch is not None and arch.id in texts["legacy_kepler_stack"]["archs"]:
        out.append(pitfall("legacy_kepler_stack", gpu=gpu.name))
    return out


def _apple_wired_limit(gpu: GpuSpec) -> Pitfall:
    """The GPU's default share of a Mac's unified memory and the sysctl that raises it,
    to the memory less ~8 GB for macOS (data/pitfalls.toml apple_wired_limit)."""
    top_gb = apple_raised_limit_gb(gpu)
    if top_gb is None:
        return pitfall(
            "apple_wired_limit_small", gpu=gpu.name, have=f"{gpu.usable_vram_gib:.0f} GiB"
        )
    return pitfall(
        "apple_wired_limit",
        gpu=gpu.name,
        have=f"{gpu.usable_vram_gib:.0f} GiB",
        mb=int(top_gb * 1024),
        max=f"{top_gb:.0f} GiB",
    )


def _rollout_share(result: EstimateResult, gpu: GpuSpec, pick: Option) -> list[Pitfall]:
    """RL with a colocated vLLM engine: the share of this card the engine must be given
    (`vllm_gpu_memory_utilization`, rounded up to 0.05) for its weights and the KV cache of
    the completions, beside the framework's default (data/post_training.toml)."""
    w, est = result.workload, result.estimate
    if not w.mode.is_post_training or est is None or pick.usable_bytes <= 0:
        return []
    from advisor.memory.rl import framework_facts

    name, fw = framework_facts(w.framework)
    term = next((t for t in est.terms if t.name == "rollout_engine"), None)
    if term is None or (w.rollout or fw["rollout"]) != "colocate":
        return []  # generate()'s KV cache, or a vLLM server on other cards
    card = gpu.vram_gb * 1e9
    share = math.ceil((term.bytes / card) * 20 + 1e-9) / 20
    return [
        pitfall(
            "rl_vllm_share",
            gpu=gpu.name,
            need=gib_text(term.bytes),
            util=f"{min(share, 0.95):.2f}",
            flag=fw["memory_flag"],
            framework={"trl": "TRL", "openrlhf": "OpenRLHF"}.get(name, name),
            default=f"{fw['colocate_memory_utilization']:g}",
        )
    ]


def slow_hours(count: int) -> float:
    """Hours past which a training time is worth a warning: three days on one card; on
    several, past the week the picks are held to (capabilities.toml max_job_hours)."""
    if count == 1:
        return 72
    return speed_constants()["max_job_hours"]


def overprovisioned(
    result: EstimateResult, gpu: GpuSpec, pick: Option, cheapest: Option | None, owned: bool
) -> list[Pitfall]:
    """An inference pick that a smaller card would do for under half its rent. Never said of
    a card the user owns (it costs nothing more per hour than a rented one would)."""
    w = result.workload
    if (
        not owned
        and cheapest is not None
        and cheapest.gpu_id != pick.gpu_id
        # over-provisioned: a smaller card would do; a larger one that rents for less
        # is a cheaper listing, not a sign the named card is too big
        and cheapest.usable_bytes < pick.usable_bytes
        and pick.fits
        and pick.price_per_hour
        and cheapest.price_per_hour
        and pick.headroom_fraction > 0.6
        and not w.mode.is_training
        and pick.price_per_hour.amount > 2 * cheapest.price_per_hour.amount
    ):
        return [
            pitfall(
                "overprovisioned",
                gpu=gpu.name,
                used=gib_text(pick.per_gpu_bytes),
                cheaper=cheapest.gpu_name,
            )
        ]
    return []


def stack_note(gpu: GpuSpec | None, owned: bool) -> list[Pitfall]:
    """The card's software stack: ROCm on AMD, SYCL / XPU on Intel; else check the image's CUDA before renting,
    not said of a card one owns that no platform rents (a Mac, a P40)."""
    if gpu is not None and gpu.vendor == "AMD":
        return [pitfall("rocm_stack", gpu=gpu.name)]  # its stack, not CUDA's
    if gpu is not None and gpu.vendor == "Intel":
        return [pitfall("intel_stack", gpu=gpu.name)]  # SYCL / XPU, no CUDA kernels
    if not (owned and gpu is not None and not gpu.rentable):
        # "before renting, check the image": not said of a Mac or a P40 one owns
        return [pitfall("cuda_compat")]
    return []
