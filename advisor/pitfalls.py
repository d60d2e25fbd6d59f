"""Pitfalls raised by a workload and the card picked for it.

Each is a code, a severity and parameters; the wording in both languages lives in
`data/pitfalls.toml`, so templates and the JSON output share it.
"""

from __future__ import annotations

import math
import tomllib
from functools import cache

from advisor.architectures import architecture_of
from advisor.catalog import DATA_DIR, GpuSpec, find_format, find_model
from advisor.constraints import (
    advisories,
    apple_raised_limit_gb,
    blockers,
    kv_cache_type,
    nvlinked,
    speed_constants,
    tp_ok,
)
from advisor.decode_speed import decode_fit
from advisor.memory.runtimes import LLAMACPP_FAMILY, coefficient
from advisor.memory.runtimes.whisper import own_kernels
from advisor.models import Attention, EstimateResult, Kind, Mode, Offload, Runtime
from advisor.types import Option, Pitfall, pitfall_texts
from advisor.units import headroom

GIB = 2**30


@cache
def gpu_notes() -> dict[str, dict[str, str]]:
    """Catalog notes on export variants in both languages (data/gpu_notes.toml)."""
    with (DATA_DIR / "gpu_notes.toml").open("rb") as fh:
        return tomllib.load(fh)


def kv_fix_texts(result: EstimateResult) -> dict[str, dict[str, str]]:
    """The smaller KV cache the runtime has, in both languages, for the KV notes' {kv_fix}
    (data/pitfalls.toml [kv_fix]); empty where it has none, the cache is already quantized,
    or the model is not an LLM (whisper: CTranslate2 and transformers quantize weights)."""
    w, est = result.workload, result.estimate
    runtime = w.runtime or (est.runtime if est is not None else None)
    texts = pitfall_texts()["kv_fix"]
    quantized = w.kv_cache_dtype not in (None, "fp16", "bf16", "f16")
    if result.model.kind != Kind.llm or quantized or runtime is None:
        return {"kv_fix": {"zh": "", "en": ""}}
    return {"kv_fix": dict(texts.get(runtime.value, {"zh": "", "en": ""}))}


def _p(
    code: str, lang_params: dict[str, dict[str, str]] | None = None, **params: object
) -> Pitfall:
    # Built from values of the field types (str codes and severities, params as text), so
    # without validation (an answer raises ~5).
    severity = pitfall_texts()[code]["severity"]
    texts = {k: str(v) for k, v in params.items()}
    if lang_params is None:
        return Pitfall.model_construct(code=code, severity=severity, params=texts)
    return Pitfall.model_construct(
        code=code, severity=severity, params=texts, lang_params=lang_params
    )


def _gib(b: float) -> str:
    return f"{b / GIB:.1f} GiB"


def card_pitfalls(result: EstimateResult, gpu: GpuSpec, pick: Option) -> list[Pitfall]:
    """What applies to running this workload on `pick` (a card and a count): shown beside a
    pick, and in the answer's list for the headline setup."""
    w, model = result.workload, result.model
    missing = blockers(gpu, result)
    out = [_p(code, gpu=gpu.name) for code in missing]
    if not missing:
        out += [_p(code, gpu=gpu.name) for code in advisories(gpu, result)]
    arch = model.arch
    split_refused = not tp_ok(result, pick.count)
    if not pick.fits and split_refused and pick.per_gpu_bytes <= pick.usable_bytes and arch:
        # memory is not what stops it, tensor parallelism is (recommend.verdict's "split"):
        # saying OOM beside a figure under the card's memory contradicted the answer. Only
        # where the count does not divide the heads: a pick short of the card's last 1%
        # (recommend.headroom.MIN_FREE) or a layer split (llama.cpp's, any count) is memory;
        # QwQ-32B's 40/8 heads on 2 cards under llama.cpp at 15.7 of 15.8 GiB were called
        # "2 does not divide".
        heads = f"{arch.heads}/{arch.kv_heads_}"
        out.append(
            _p(
                "tp_split",
                count=pick.count,
                gpu=gpu.name,
                need=_gib(pick.per_gpu_bytes),
                heads=heads,
            )
        )
    elif not pick.fits and not _under_raised_limit(gpu, pick):
        # Ollama splits the layers itself when they do not all fit (`ollama ps`: "CPU/GPU"):
        # slower, not an OOM; saying OOM beside the "-ngl / num_gpu" fix contradicted it
        runs_split = result.estimate is not None and result.estimate.runtime == Runtime.ollama
        out.append(
            _p(
                "oom_ollama" if runs_split else "oom",
                need=_gib(pick.per_gpu_bytes),
                gpu=gpu.name,
                count=pick.count,
                have=_gib(pick.usable_bytes),
            )
        )
    elif pick.risky:
        out.append(_p("tight_headroom", headroom=headroom(pick.headroom_fraction)))
    if pick.train_hours is not None and pick.train_hours > _slow_hours(pick.count):
        out.append(_p("slow_compute", hours=f"{pick.train_hours:.0f}", count=pick.count))
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
        out.append(_p("no_bf16_inference", gpu=gpu.name))
    fa2_blocked = "flash_attention_needs_ampere" in {p.code for p in out}
    old_card = gpu.vendor == "NVIDIA" and 0 < gpu.cc < 8.0
    if old_card and model.kind == Kind.llm and not fa2_blocked and not gguf:
        out.append(_p("no_flash_attention", gpu=gpu.name))
    if gpu.vendor == "Apple":
        out.append(_apple_wired_limit(gpu))
    if gpu.cc >= 10.0 and gpu.segment != "datacenter" or gpu.id.startswith("rtx-5"):
        out.append(_p("blackwell_cuda"))
    layer_split = (
        pick.count > 1
        and not w.mode.is_training
        and getattr(runtime, "value", runtime) == "transformers"
        and pick.parallelism == "tp"
    )
    by_layers = layer_split or pick.parallelism == "layer"  # llama.cpp's --split-mode layer
    if pick.count > 1 and not nvlinked(gpu, pick.count) and not by_layers:
        # a split by layers has no all-reduce: the missing NVLink costs it nothing
        out.append(_p("no_nvlink", gpu=gpu.name))
    if layer_split:
        # transformers' device_map="auto" puts whole layers on each card: one card works at
        # a time, which is what a user moving to several cards for speed should know
        out.append(_p("layer_split_sequential"))
    out += _rollout_share(result, gpu, pick)
    out += _old_server_card(gpu)
    note = gpu_notes().get(gpu.id)
    if note is not None:
        lang_params = {"note": {"zh": note["zh"], "en": note["en"]}}
        out.append(_p("export_variant", lang_params, gpu=gpu.name))
    return out


def _under_raised_limit(gpu: GpuSpec, pick: Option) -> bool:
    """A Mac whose GPU share, raised by the sysctl apple_wired_limit names, holds the pick:
    not an OOM (the headline names the sysctl)."""
    top = apple_raised_limit_gb(gpu)
    return top is not None and pick.per_gpu_bytes <= top * GIB * 0.99


def _old_server_card(gpu: GpuSpec) -> list[Pitfall]:
    """A used server board in a desktop (cooling, power plug, BIOS, display), a dual-GPU
    board (K80), and an architecture whose software stopped (Kepler)."""
    texts = pitfall_texts()
    out = []
    if gpu.id in texts["passive_datacenter_card"]["cards"]:
        out.append(_p("passive_datacenter_card", gpu=gpu.name))
    if gpu.id in texts["dual_gpu_board"]["cards"]:
        out.append(_p("dual_gpu_board", gpu=gpu.name))
    arch = architecture_of(gpu)
    if arch is not None and arch.id in texts["legacy_kepler_stack"]["archs"]:
        out.append(_p("legacy_kepler_stack", gpu=gpu.name))
    return out


def _kv_cache_notes(result: EstimateResult) -> list[Pitfall]:
    """What a quantized KV cache needs of llama.cpp and Ollama: flash attention for the V
    half, and on CUDA the kernels its default build carries (data/pitfalls.toml)."""
    kv, est = kv_cache_type(result), result.estimate
    runtime = est.runtime if est is not None else None
    if kv is None or not kv.startswith(("q", "iq")) or runtime not in LLAMACPP_FAMILY:
        return []
    if runtime == Runtime.ollama:
        return [_p("ollama_kv_needs_flash_attention", kv=kv)]
    if result.workload.attention == Attention.eager:  # -fa off
        return [_p("llamacpp_kv_flash_attention_off")]
    return [_p("llamacpp_kv_needs_flash_attention")]


def _apple_wired_limit(gpu: GpuSpec) -> Pitfall:
    """The GPU's default share of a Mac's unified memory and the sysctl that raises it,
    to the memory less ~8 GB for macOS (data/pitfalls.toml apple_wired_limit)."""
    top_gb = apple_raised_limit_gb(gpu)
    if top_gb is None:
        return _p("apple_wired_limit_small", gpu=gpu.name, have=f"{gpu.usable_vram_gib:.0f} GiB")
    return _p(
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
        _p(
            "rl_vllm_share",
            gpu=gpu.name,
            need=_gib(term.bytes),
            util=f"{min(share, 0.95):.2f}",
            flag=fw["memory_flag"],
            framework={"trl": "TRL", "openrlhf": "OpenRLHF"}.get(name, name),
            default=f"{fw['colocate_memory_utilization']:g}",
        )
    ]


def _loaded_weight_bytes(result: EstimateResult) -> float:
    """What is loaded from disk into RAM: the weights on the cards; for a diffusion pipeline
    every component, wherever it runs (offloaded or streamed ones live in host RAM, and the
    GPU-side terms then show only what is resident)."""
    est, w, model = result.estimate, result.workload, result.model
    assert est is not None
    on_cards = est.breakdown.get("weights", 0) * max(w.num_gpus, 1)
    spec = find_model(model.id) if model.kind == Kind.diffusion and model.id else None
    if spec is None or spec.diffusion is None:
        return on_cards
    d = spec.diffusion
    name = w.weights_format or next(
        (a.value for a in result.assumed if a.field == "weights_format"), "bf16"
    )
    fmt = find_format(name)
    bits = min(fmt.bits if fmt is not None else 16.0, 16.0)
    others = sum(d.text_encoders_params_b) + d.vae_params_b
    return max(on_cards, d.denoiser_params_b * 1e9 * bits / 8 + others * 1e9 * 2)


def _slow_hours(count: int) -> float:
    """Hours past which a training time is worth a warning: three days on one card; on
    several, past the week the picks are held to (capabilities.toml max_job_hours)."""
    if count == 1:
        return 72
    return speed_constants()["max_job_hours"]


def find_pitfalls(
    result: EstimateResult,
    gpu: GpuSpec | None,
    pick: Option | None,
    cheapest: Option | None,
    owned: bool = False,
    card_notes: list[Pitfall] | None = None,
) -> list[Pitfall]:
    """`owned`: the named card is the user's own; it is never called over-provisioned (a
    card one owns costs nothing more per hour than a rented one would). `card_notes`:
    `card_pitfalls(result, gpu, pick)` when the caller has it already (the pick's notes)."""
    out: list[Pitfall] = []
    w, model, est = result.workload, result.model, result.estimate
    if est is None:
        out.append(_p("no_formula"))
        return out
    if gpu is not None and pick is not None:
        out += card_pitfalls(result, gpu, pick) if card_notes is None else card_notes
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
            out.append(
                _p(
                    "overprovisioned",
                    gpu=gpu.name,
                    used=_gib(pick.per_gpu_bytes),
                    cheaper=cheapest.gpu_name,
                )
            )
    arch = model.arch
    if arch is not None and arch.experts:
        out.append(
            _p(
                "moe_total_params",
                total=f"{model.params_b:g}B",
                active=f"{model.active_params_b:g}B",
            )
        )
    asked = w.seq_len if w.mode.is_training else w.context_tokens
    if arch is not None and model.kind == Kind.llm and asked and asked > arch.max_context_tokens:
        out.append(
            _p("beyond_model_context", model=model.name, max=arch.max_context_tokens, asked=asked)
        )
    kv = est.breakdown.get("kv_cache", 0)
    if kv > 0.3 * est.allocated_bytes and kv > 2 * GIB:
        batch = w.concurrency or w.batch_size or 1
        context = w.context_tokens or w.seq_len or 4096
        kv_fix = kv_fix_texts(result)
        # the breakdown is per card: on several, the total beside it (the cards' share)
        cards = w.num_gpus if est.per_gpu else 1
        extra = {"n": str(cards), "total": _gib(kv * cards)} if cards > 1 else {}
        suffix = "_cards" if cards > 1 else ""
        if _fixed_context(result):  # Whisper's decoder: 448 tokens, the batch is the lever
            out.append(
                _p(
                    "batch_kv_fixed_context",
                    kv=_gib(kv),
                    batch=batch,
                    model=model.name,
                    ctx=arch.max_context_tokens if arch is not None else context,
                )
            )
        elif batch > 1 and context < 8192:  # many sequences, not a long one
            out.append(_p("batch_kv" + suffix, kv_fix, kv=_gib(kv), batch=batch, **extra))
        else:
            out.append(_p("long_context_kv" + suffix, kv_fix, kv=_gib(kv), **extra))
    framework = w.runtime.value if w.runtime else (w.framework or "").lower()
    engine = est.runtime.value if est.runtime in (Runtime.vllm, Runtime.sglang) else None
    if framework == "vllm" or engine is not None:
        # whenever the figure is a serving engine's, assumed or asked: the answer's
        # nvidia-smi view is then the engine's share of the card, and this says why
        engine = engine or "vllm"
        util = w.gpu_memory_utilization or coefficient(engine, "gpu_memory_utilization")
        name = {"vllm": "vLLM", "sglang": "SGLang"}[engine]
        out.append(_p("vllm_preallocates", engine=name, share=f"{util * 100:.0f}%", util=util))
    if framework in ("transformers", "hf") and not w.mode.is_training:
        out.append(_p("hf_generate_kv"))
    out += _kv_copies_speed(result)
    out += _kv_cache_notes(result)
    if w.tuning == Mode.qlora:
        out.append(_p("qlora_host_ram", size=_gib(model.params_b * 2e9)))
    if gpu is not None and pick is not None:
        out += rollout_time(result, gpu)
    fmt = find_format(w.weights_format) if w.weights_format else None
    if fmt is not None and fmt.bits < 4.0:
        out.append(_p("low_bit_quality", fmt=fmt.id))
    if (
        w.tuning in (Mode.full, Mode.pretrain)
        and model.params_b >= 3
        and w.num_gpus == 1
        and (pick is None or not pick.fits or pick.count > 1)
    ):
        out.append(_p("full_finetune_multi_gpu", params=f"{model.params_b:g}B"))
    offloaded = w.tuning in (Mode.full, Mode.pretrain) and w.cpu_offload in (
        Offload.optimizer,
        Offload.params,
    )
    if offloaded:
        # The host holds the offloaded state of the whole model, not the GPUs' weights.
        kind = w.cpu_offload.value
        texts = pitfall_texts()["host_ram_offload"]
        bpp = texts[f"bytes_per_param_{kind}"]
        what = {"what": {lang: texts[f"what_{lang}_{kind}"] for lang in ("zh", "en")}}
        out.append(_p("host_ram_offload", what, size=_gib(model.params_b * 1e9 * bpp), bpp=bpp))
    elif model.params_b >= 1 and w.tuning != Mode.qlora:
        # QLoRA: qlora_host_ram says what host RAM and disk its shard-by-shard load needs
        out.append(_p("host_ram_disk", size=_gib(_loaded_weight_bytes(result))))
    if gpu is not None:
        out += _stack_floor(result, gpu)
    if pick is not None and (not pick.fits or pick.risky):
        out += _own_levers(result)
    if gpu is not None and gpu.vendor == "AMD":
        out.append(_p("rocm_stack", gpu=gpu.name))  # its stack, not CUDA's
    elif not (owned and gpu is not None and not gpu.rentable):
        # "before renting, check the image": not said of a Mac or a P40 one owns
        out.append(_p("cuda_compat"))
    return out


def _stack_floor(result: EstimateResult, gpu: GpuSpec) -> list[Pitfall]:
    """The named trainer's own stated floor for this model family, on a card at or under
    it (data/pitfalls.toml [stack_floor]): its README's setting for such a card."""
    w = result.workload
    floor = pitfall_texts()["stack_floor"]["floors"].get((w.framework or "").lower())
    spec = find_model(w.model) if w.model else None
    if floor is None or spec is None or spec.family not in floor["families"]:
        return []
    if gpu.vram_gb > floor["floor_gb"]:
        return []
    have = _gib(gpu.usable_vram_gib * GIB)
    return [
        _p(
            "stack_floor",
            stack=floor["name"],
            model=result.model.name,
            floor=floor["floor_gb"],
            gpu=gpu.name,
            have=have,
        )
    ]


def rollout_time(result: EstimateResult, gpu: GpuSpec) -> list[Pitfall]:
    """An online RL run (GRPO, RLOO, PPO): no training time is given, and why; what the
    time goes to (generating G completions per prompt, TRL docs "vLLM integration") and a
    floor for one prompt's group: its completions decode together, one step reading the
    policy's weights once at vLLM's measured decode bandwidth efficiency
    (data/decode_speed.toml), so a group of G x N tokens takes at least N steps."""
    from advisor.memory.rl import framework_facts, method_facts, num_generations

    w, est = result.workload, result.estimate
    if est is None or w.mode.value not in RL_MODES or not method_facts(w.mode)["online"]:
        return []
    _, fw = framework_facts(w.framework)
    completion = w.new_tokens or fw["completion_tokens"]
    weights = est.breakdown.get("weights", 0)
    # vLLM's measured decode efficiency (TRL generates with vLLM when asked to: the floor)
    bandwidth = decode_fit("vllm", gpu).efficiency * gpu.memory_bandwidth_gbs * 1e9
    if weights <= 0 or bandwidth <= 0:
        return []
    step_s = weights / bandwidth
    return [
        _p(
            "rl_generation_time",
            g=num_generations(w),
            tokens=completion,
            seconds=f"{completion * step_s:.0f}",
            gpu=gpu.name,
        )
    ]


# Post-training methods (Workload.mode values) advisor/memory/rl.py sizes.
RL_MODES = frozenset(("grpo", "dpo", "ppo", "kto", "orpo", "simpo", "rloo"))


def _fixed_context(result: EstimateResult) -> bool:
    """A speech model (data/vocab/runtimes.toml speech_families): its decoder's context is
    fixed by the model, so a shorter context is no advice."""
    from advisor import catalog
    from advisor.parse import vocab

    spec = catalog.models().get(result.model.id or "")
    return spec is not None and spec.family in vocab.load("runtimes")["speech_families"]


def _kv_copies_speed(result: EstimateResult) -> list[Pitfall]:
    """Where transformers' extra passes over the KV cache (speed.transformers_kv_copies) are
    over half of what a decode step reads for the weights: said beside the speed, sourced."""
    from advisor.recommend.speed import transformers_kv_copies

    est, arch = result.estimate, result.model.arch
    copies = transformers_kv_copies(result)
    if est is None or not copies or _fixed_context(result):
        return []  # a speech model's speed is a real-time factor, not tokens per second
    extra = est.breakdown.get("kv_cache", 0) * copies
    if extra < 0.5 * est.breakdown.get("weights", 0):
        return []
    groups = arch.heads // arch.kv_heads_ if arch is not None else 1
    texts = pitfall_texts()["hf_generate_kv_speed"]["expand"]
    expand = {k: v.format(groups=groups) for k, v in texts.items()} if copies > 2 else {}
    return [
        _p(
            "hf_generate_kv_speed",
            {"expand": expand or {"zh": "", "en": ""}},
            extra=_gib(extra),
        )
    ]


def _own_levers(result: EstimateResult) -> list[Pitfall]:
    """The pipeline's own memory levers from its authors' guide (data/pitfalls.toml
    [own_levers], by catalog family), for a card that is tight or short."""
    spec = find_model(result.model.id) if result.model.id else None
    levers = pitfall_texts()["own_levers"]["families"].get(spec.family if spec else "")
    if levers is None:
        return []
    return [_p("own_levers", {"text": {"zh": levers["zh"], "en": levers["en"]}})]
