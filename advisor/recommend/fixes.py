"""What to change when a setup is tight or does not fit, cheapest change first.

Cost to the user, lowest first: settings that change nothing about the result (batch 1
with gradient accumulation, gradient checkpointing, a fused loss, an 8-bit optimizer, an
fp8 KV cache), then a shorter context, then a smaller number format, then a different
recipe (LoRA / QLoRA), then offload, and last more cards. Every fix is checked by running
the estimate again, and must leave the card able to run the job (constraints)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain

from advisor.catalog import GpuSpec, find_format
from advisor.constraints import (
    Requirement,
    applicable,
    blockers,
    kv_cache_type,
    runtime_of,
    tp_ok,
)
from advisor.largest import largest
from advisor.memory import CUDA_CONTEXT_BYTES
from advisor.models import (
    EstimateResult,
    Kind,
    Mode,
    Offload,
    Optimizer,
    Parallelism,
    Runtime,
    Workload,
)
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.recipes import recipe_fixes
from advisor.recommend.setup_fixes import offered, own_fixes

HEADROOM = 0.20  # the guide (GPU选型, "显存误估危害"): keep at least 20% of VRAM free
# Under 1% free is shown as "0% headroom" (units.headroom rounds down), and a card at 0%
# is not one that "runs" it: an H200 at 139 of 140 GiB was "⚠️ Runs, tight (0%)". Every
# fits/does-not-fit test goes through `runs_in`, so a headline, a pick and a side-by-side
# agree (tests/test_answer_invariants.py::test_no_zero_headroom_fit).
MIN_FREE = 0.01


def runs_in(need: float, usable: float) -> bool:
    """The job's per-card figure leaves at least `MIN_FREE` of the card's usable memory."""
    return need <= usable * (1 - MIN_FREE)


# Card counts tried, fewest first: any count on one machine (ZeRO-3 / FSDP, data parallel,
# llama.cpp's and pipeline layer splits take 3 or 6 cards as well as 4; vLLM/SGLang tensor
# parallelism only where the count divides the attention heads, `tp_ok`), then whole 8-card
# machines. A ladder of 1/2/4/8 answered "at least 4" for a DPO full fine-tune its own
# estimate ran on 3 A100 80GB with 33% free.
COUNTS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 32)
# The most cards of one machine (an 8-GPU node): more is a multi-node cluster.
ONE_MACHINE = 8


def adds_cards(code: str) -> bool:
    """A change that runs the job on more cards ("cards:4", or "stack:cards:2+…": fewer
    more cards with settings of the same run)."""
    return code.startswith(("cards:", "stack:cards:"))


# Fixes that leave the model, its format and the user's recipe as they are: offered on
# other cards too, so a 24 GB card that fits with one of them beats a 48 GB card.
CHEAP = (
    "batch",
    "checkpointing",
    "chunked_loss",
    "optimizer_8bit",
    "batched_tokens",
    "eager",
    "eager_batched",
    "kv_fp8",
    "kv_16bit",
    "kv_q8_ollama",
    "kv_q8_llamacpp",
    "kv_q4_exllama",
    "vllm_lean",
    "vllm_lean_tp",
)
# Fixes that stream weights from CPU RAM every step: several times slower. A change that
# fits (even tight) at full speed is advised before them.
SLOW = ("offload_params", "offload_sequential", "offload_sequential_one_image", "gpu_layers")
# llama.cpp / Ollama partial offload on the user's own card (-ngl N; Ollama's num_gpu): the
# most layers under the cap (fixes_for: _most_gpu_layers); the rest run on the CPU at its
# memory bandwidth (advisor/recommend/speed.py). Before renting more cards. The candidate
# list names one count as a marker; the search over counts replaces it.
GPU_LAYER_SHARE = 0.5
VLLM_LIKE = ("vllm", "sglang")
SMALL_BATCHED_TOKENS = 2048  # vLLM --max-num-batched-tokens; still >= a 2k prompt per step
# vLLM's own knobs for a small card (docs "Optimization and tuning", "Conserving memory"):
# --enforce-eager drops the CUDA-graph pool, --max-num-batched-tokens 2048 and
# --max-num-seqs 16 shrink the start-up profile (forward buffers and sampler logits).
# With tensor parallel, --disable-custom-all-reduce drops its IPC buffers (NCCL only).
VLLM_LEAN = {"cuda_graphs": False, "max_num_batched_tokens": 2048, "max_num_seqs": 16}
VLLM_LEAN_TP = {**VLLM_LEAN, "custom_all_reduce": False}
# One ladder of vLLM / SGLang flag sets for a small card, least first; all change no answer.
# A smaller prefill chunk costs a little prefill throughput, eager mode a little decode
# speed, 16 sequences at once caps concurrency. Only the first set that fits is advised
# (one kind, `vllm_flags`); with tensor parallel the full set also drops the custom
# all-reduce buffers. (code, flags, tensor-parallel only, single card only)
VLLM_FLAG_LADDER: tuple[tuple[str, dict, bool, bool], ...] = (
    (
        f"batched_tokens:{SMALL_BATCHED_TOKENS}",
        {"max_num_batched_tokens": SMALL_BATCHED_TOKENS},
        False,
        False,
    ),
    ("eager", {"cuda_graphs": False}, False, False),
    (
        f"eager_batched:{SMALL_BATCHED_TOKENS}",
        {"cuda_graphs": False, "max_num_batched_tokens": SMALL_BATCHED_TOKENS},
        False,
        False,
    ),
    ("vllm_lean", VLLM_LEAN, False, True),
    ("vllm_lean_tp", VLLM_LEAN_TP, True, False),
)
VLLM_FLAG_CODES = {code.partition(":")[0] for code, *_ in VLLM_FLAG_LADDER}
# A smaller KV cache, in each runtime's own setting: (fix code, cache type).
KV_FIXES = {
    Runtime.ollama: ("kv_q8_ollama", "q8_0"),  # OLLAMA_KV_CACHE_TYPE=q8_0
    Runtime.llamacpp: ("kv_q8_llamacpp", "q8_0"),  # --cache-type-k/v q8_0
    Runtime.lmstudio: ("kv_q8_llamacpp", "q8_0"),
    Runtime.exllamav2: ("kv_q4_exllama", "q4_0"),  # ExLlamaV2Cache_Q4, ~4.5 bits a value
}
# Smaller formats a runtime loads: llama.cpp only reads GGUF types.
# GGUF Q8_0 after int8: the same bytes where int8 runs, the 8-bit route where it does not
# (vLLM on a Radeon: INT8 ❌, GGUF ✅ in its quantization hardware table).
QUANTIZE_FORMATS = ("fp8", "int8", "q8_0", "awq-4bit", "q4_k_m")
# Under llama.cpp and its front ends Q8_0 first: where it fits with the guide's headroom it is
# the change with the least quality lost (the grid's Q8_0 ✅ beside a fix that named Q4_K_M).
GGUF_QUANTIZE_FORMATS = ("q8_0", "q4_k_m", "q3_k_m")
# transformers quantizes any checkpoint on load with bitsandbytes (load_in_8bit /
# load_in_4bit, BitsAndBytesConfig): 8-bit, then 4-bit NF4, before the pre-quantized
# checkpoints (transformers docs "bitsandbytes", read 2026-12-07).
TRANSFORMERS_QUANTIZE_FORMATS = ("int8", "nf4", *(f for f in QUANTIZE_FORMATS if f != "int8"))
# Diffusion checkpoints come in fp8 (ComfyUI float8_e4m3fn), int8 and NF4 (bitsandbytes).
DIFFUSION_QUANTIZE_FORMATS = ("fp8", "int8", "nf4")


def workload_for(w: Workload, count: int) -> Workload:
    """The same work on `count` cards: ZeRO-3 for training; for inference the engine's
    split for the runtime (tensor parallel, llama.cpp's layer split), unless the user named
    a split."""
    if count == w.num_gpus:
        return w
    par = w.parallelism
    if count > 1 and par in (None, Parallelism.none):
        par = Parallelism.zero3 if w.mode.is_training else None
    return w.model_copy(
        update={"num_gpus": count, "parallelism": par if count > 1 else Parallelism.none},
    )


def _context_of(result: EstimateResult) -> tuple[str, int] | None:
    """The field that holds the sequence length and its value (assumed or asked)."""
    w = result.workload
    if result.model.kind != Kind.llm:
        return None
    if w.mode.is_training:
        return "seq_len", w.seq_len or _assumed_int(result, "seq_len") or 2048
    return "context_tokens", w.context_tokens or _assumed_int(result, "context_tokens") or 4096


def _assumed_int(result: EstimateResult, field: str) -> int | None:
    for a in result.assumed:
        if a.field == field and a.value.isdigit():
            return int(a.value)
    return None


# Formats to switch to when the card cannot run the one asked (AWQ on a V100 -> GPTQ).
SWITCH_FORMATS = ("gptq-4bit", "int8", "awq-4bit", "q4_k_m", "fp16")


def unblocking_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """Changes that remove a card's missing requirement: a 16-bit KV cache, another number
    format, fp16 instead of bf16 for training, sdpa instead of FlashAttention-2."""
    w = result.workload
    if w.mode.is_training:
        if w.compute_dtype != "fp16":
            yield "fp16_training", lambda: w.model_copy(update={"compute_dtype": "fp16"})
    elif result.model.kind == Kind.llm:
        if kv_cache_type(result) == "fp8" and runtime_of(result) == "vllm":
            # vLLM's fp8 cache needs CC 8.9+ (capabilities.toml vllm_fp8_kv_needs_ada): on
            # an Ampere card, the same run with the flag dropped
            yield "kv_16bit", partial(w.model_copy, update={"kv_cache_dtype": None})
        current = find_format(w.weights_format) if w.weights_format else None
        for fmt in SWITCH_FORMATS:
            if current is None or current.id != fmt:
                yield f"quantize:{fmt}", partial(w.model_copy, update={"weights_format": fmt})
    if w.attention is not None and w.attention.value == "flash":
        yield "attention_sdpa", lambda: w.model_copy(update={"attention": "sdpa"})


def candidate_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """(code, changed workload) in order of cost to the user; only those the named setup
    can make, then its own (setup_fixes: a smaller Whisper, faster-whisper int8)."""
    w = result.workload
    for code, make in chain(setting_fixes(result), costlier_fixes(result), own_fixes(result)):
        if offered(code, w):
            yield code, make


def setting_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """The first of `candidate_fixes`: settings of the same run (batch, checkpointing, the
    loss, the optimizer, the serving engine's flags, the KV cache), among them every
    `CHEAP` one (CheapFixes reads no further)."""
    w, model = result.workload, result.model
    training = w.mode.is_training
    # a post-training framework's own micro-batch (TRL: 8) counts as one asked
    framework_batch = _assumed_int(result, "rl_train_batch") or _assumed_int(
        result, "rl_pair_batch"
    )
    if training and (w.batch_size or framework_batch or 1) > 1:
        yield "batch:1", lambda: w.model_copy(update={"batch_size": 1})
    if training and not w.gradient_checkpointing:
        yield "checkpointing", lambda: w.model_copy(update={"gradient_checkpointing": True})
    if training and model.kind == Kind.llm and not w.chunked_loss:
        yield "chunked_loss", lambda: w.model_copy(update={"chunked_loss": True})
    if (
        training
        and model.kind == Kind.llm
        and w.tuning in (Mode.lora, Mode.qlora)
        and w.num_gpus == 1
        and (w.framework or "").lower() != "unsloth"
    ):
        # The same LoRA/QLoRA run under Unsloth: no full logits (fused chunked loss) and
        # gradient checkpoints offloaded to CPU RAM (use_gradient_checkpointing="unsloth");
        # single-GPU in its open-source release. Read 2026-11-30.
        yield "unsloth", lambda: w.model_copy(update={"framework": "unsloth"})
    full = w.tuning in (Mode.full, Mode.pretrain)
    if full and w.optimizer not in (Optimizer.adamw_8bit, Optimizer.paged_adamw_8bit):
        yield (
            "optimizer_8bit",
            lambda: w.model_copy(update={"optimizer": Optimizer.paged_adamw_8bit}),
        )
    runtime = result.estimate.runtime if result.estimate else None
    if not training and runtime_of(result) in VLLM_LIKE:
        yield from vllm_flag_fixes(w)
    # transformers' generate() has no fp8 KV cache (its quantized caches are quanto/HQQ
    # int4/int2): an answer that says "runtime: transformers" offered "vLLM
    # --kv-cache-dtype fp8" as the change that makes it fit.
    kv_runtime = runtime != Runtime.transformers
    if (
        kv_runtime
        and not training
        and model.kind == Kind.llm
        and w.kv_cache_dtype not in ("fp8", "q8_0", "q4_0")
    ):
        kv_code, kv_type = KV_FIXES.get(runtime, ("kv_fp8", "fp8"))  # type: ignore[arg-type]
        yield kv_code, partial(w.model_copy, update={"kv_cache_dtype": kv_type})


def costlier_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """The rest of `candidate_fixes`, none of them `CHEAP`: a shorter context, the
    small-card recipes, a smaller format, another recipe, offload, more cards."""
    w, model = result.workload, result.model
    training = w.mode.is_training
    full = w.tuning in (Mode.full, Mode.pretrain)
    runtime = result.estimate.runtime if result.estimate else None
    ctx = _context_of(result)
    if ctx is not None:
        field, value = ctx
        floor = 512 if training else 2048
        shorter = value // 2
        while shorter >= floor:
            extra = {} if training else {"prompt_tokens": None, "new_tokens": None}
            yield (
                f"shorter_context:{shorter}",
                partial(w.model_copy, update={field: shorter, **extra}),
            )
            shorter //= 2
    if model.kind == Kind.diffusion:
        # The small-card recipe ladder (recipes.py): slicing and tiling, components taking
        # turns, text encoders off the GPU, one image at a time, streamed layers; for LoRA,
        # the frozen base in fp8 or NF4. Before quantizing: the images stay as they are.
        yield from recipe_fixes(result)
    if not training and model.kind in (Kind.llm, Kind.diffusion):
        bits = _bits(w, result)
        gguf = runtime in (Runtime.llamacpp, Runtime.ollama, Runtime.lmstudio)
        formats: tuple[str, ...] = GGUF_QUANTIZE_FORMATS if gguf else QUANTIZE_FORMATS
        if runtime == Runtime.transformers and model.kind == Kind.llm:
            formats = TRANSFORMERS_QUANTIZE_FORMATS
        if model.kind == Kind.diffusion:
            formats = DIFFUSION_QUANTIZE_FORMATS
        for fmt in formats:
            target = find_format(fmt)
            if target is not None and target.bits < bits:
                # A diffusion pipeline's text encoders are quantized too (the engine keeps
                # them 16-bit unless told); an LLM ignores the field.
                update: dict[str, object] = {"weights_format": fmt, "text_encoder_format": fmt}
                if w.runtime is None and runtime is not None:
                    # on the answer's runtime, as its precision grid judges each format: left
                    # unset, a format would bring its own default runtime (fp8 or AWQ: vLLM),
                    # and "quantize to fp8" stood beside the grid's ⛔ for fp8 on a 3090
                    update["runtime"] = runtime
                yield f"quantize:{fmt}", partial(w.model_copy, update=update)
    gguf_runtime = runtime in (Runtime.llamacpp, Runtime.ollama, Runtime.lmstudio)
    arch = model.arch
    if not training and model.kind == Kind.llm and gguf_runtime and arch is not None:
        on_card = arch.layers if w.n_gpu_layers is None else w.n_gpu_layers
        layers = min(int(arch.layers * GPU_LAYER_SHARE), on_card - 1)
        if layers > 0:
            yield (
                f"gpu_layers:{layers}",
                partial(w.model_copy, update={"n_gpu_layers": layers}),
            )
    # Under DPO/GRPO/PPO the method stays; the policy's own recipe changes.
    recipe = "policy_mode" if w.mode.is_post_training else "mode"
    if full:
        yield "lora", lambda: w.model_copy(update={recipe: Mode.lora})
    if training and w.tuning != Mode.qlora and model.kind == Kind.llm:
        yield "qlora", lambda: w.model_copy(update={recipe: Mode.qlora, "weights_format": "nf4"})
    if training and w.cpu_offload == Offload.none:
        yield "offload", lambda: w.model_copy(update={"cpu_offload": Offload.optimizer})
        # Sharded weights on the CPU, gathered a layer at a time (FSDP-QLoRA's 70B-on-2x24GB
        # recipe; the PEFT FSDP guide measured 19.6 GB/GPU with it, 35.6 GB without).
        sharded = (
            w.parallelism
            if w.parallelism in (Parallelism.zero3, Parallelism.fsdp)
            else Parallelism.fsdp
        )
        yield (
            "offload_params",
            lambda: w.model_copy(update={"cpu_offload": Offload.params, "parallelism": sharded}),
        )
    for count in COUNTS:
        if w.num_gpus < count <= ONE_MACHINE:
            yield f"cards:{count}", partial(workload_for, w, count)


def vllm_flag_fixes(w: Workload) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """The vLLM flag ladder's rungs that change something for this workload."""
    current = w.__dict__  # the flags' own values (model_dump's for these fields, uncopied)
    tp = w.num_gpus > 1
    for code, flags, tp_only, single_only in VLLM_FLAG_LADDER:
        if (tp_only and not tp) or (single_only and tp):
            continue
        # never looser than asked: a smaller chunk or fewer sequences the user set stay
        update = {
            k: min(v, current[k]) if isinstance(v, int) and current.get(k) else v
            for k, v in flags.items()
            if not isinstance(v, bool)
        } | {k: v for k, v in flags.items() if isinstance(v, bool)}
        if all(current.get(k) == v for k, v in update.items()):
            continue
        yield code, partial(w.model_copy, update=update)


def _bits(w: Workload, result: EstimateResult) -> float:
    fmt = find_format(w.weights_format) if w.weights_format else None
    if fmt is None:
        for a in result.assumed:
            if a.field == "weights_format":
                fmt = find_format(a.value)
    return fmt.bits if fmt is not None else 16.0


def fixes_for(
    result: EstimateResult,
    gpu: GpuSpec,
    *,
    comfortable: bool = True,
    only_cheap: bool = False,
    limit: int = 4,
    trials: dict[tuple[int, str], tuple[EstimateResult, list[Requirement] | None]] | None = None,
    blocked: bool | None = None,
    enough: Callable[[list[tuple[str, EstimateResult]]], bool] | None = None,
) -> list[tuple[str, EstimateResult]]:
    """Changes that make `result` fit `gpu` (with the guide's headroom when `comfortable`),
    cheapest first, each with its new estimate (lean: its totals, never to be shown; see
    estimates.trial_estimate). One card-count fix at most: the fewest.
    `trials` keeps estimates (and their requirements) across cards: a changed workload
    weighs the same on any card. `enough`: the caller needs no more than the list so far
    (checked after each fix found; each fix further costs an estimate)."""
    cap = gpu.usable_vram_bytes * ((1 - HEADROOM) if comfortable else (1 - MIN_FREE))
    out: list[tuple[str, EstimateResult]] = []
    seen_kinds: set[str] = set()
    candidates = candidate_fixes(result)
    if blocked if blocked is not None else blockers(gpu, result):
        candidates = unblocking_fixes(result)  # first make the card able to run it at all
    for code, make in candidates:
        kind = code.partition(":")[0]
        if only_cheap and kind not in CHEAP:
            continue
        family = "vllm_flags" if kind in VLLM_FLAG_CODES else kind
        if family in seen_kinds and family in (
            "cards",
            "shorter_context",
            "quantize",
            "vllm_flags",
            "gpu_layers",
            "smaller_model",
        ):
            continue  # the least change of each kind is the advice
        if _cannot_lower(code, result) and (
            result.estimate is None or result.estimate.total_bytes > cap
        ):
            continue  # its estimate would be this one's, over the cap as this one is
        if kind == "gpu_layers":
            if family in seen_kinds or gpu.vendor == "Apple":
                continue  # unified memory: the layers left to the CPU live in it too
            seen_kinds.add(family)  # one count: the most layers under the cap
            layers = _most_gpu_layers(result, cap)
            if not layers:
                continue
            code = f"gpu_layers:{layers}"
            make = partial(result.workload.model_copy, update={"n_gpu_layers": layers})
        key = (id(result), code)
        if trials is not None and key in trials:
            trial, reqs = trials[key]
        else:
            try:
                trial = trial_estimate(make())
            except ValueError:
                continue
            reqs = None
            if trials is not None:
                trials[key] = (trial, reqs)
        if trial.estimate is None or trial.estimate.total_bytes > cap:
            continue
        if not tp_ok(trial, trial.workload.num_gpus):
            continue  # vLLM would not start: the count does not divide the heads
        if reqs is None:  # read only for a change that fits (most trials do not)
            reqs = applicable(trial)
            if trials is not None:
                trials[key] = (trial, reqs)
        if blockers(gpu, trial, reqs):
            continue
        out.append((code, trial))
        seen_kinds.add(family)
        if len(out) >= limit or (enough is not None and enough(out)):
            break
    return out


def _most_gpu_layers(result: EstimateResult, cap: float) -> int:
    """The most layers (-ngl) under `cap` of fewer than the job keeps on the card now; 0
    when none. Found by halving: a layer more never weighs less."""
    w, arch = result.workload, result.model.arch
    if arch is None:
        return 0
    top = min(arch.layers, w.n_gpu_layers if w.n_gpu_layers is not None else arch.layers) - 1

    def fits(n: int) -> bool:
        est = trial_estimate(w.model_copy(update={"n_gpu_layers": n})).estimate
        return est is not None and est.total_bytes <= cap

    return (largest(1, top, fits) or 0) if top >= 1 else 0


def _cannot_lower(code: str, result: EstimateResult) -> bool:
    """A fix whose estimate cannot come out under this one's, so that it is skipped where
    this one is over the cap (skipping saves an estimate per card count):

    - one that sets what the engine already assumed: training.training_setup turns
      checkpointing on for a model of 1B or more when not told, and says so;
    - one that only shrinks what the forward and backward pass hold (`ACTIVATION_FIXES`),
      on an estimate whose peak is the optimizer step (its `optimizer_step` term, which
      training.estimate_training adds only then): the weights, gradients, optimizer states
      and the step's buffer stay, so the step's peak stays and the new peak is at least it
      (a full fine-tune of a 70B model: a fused loss or a shorter sequence changes
      nothing). tests/test_recommend_cheap_floor.py checks both on every count."""
    if code == "checkpointing" and any(
        a.field == "gradient_checkpointing" and a.value == "on" for a in result.assumed
    ):
        return True
    if code.partition(":")[0] not in ACTIVATION_FIXES or result.estimate is None:
        return False
    return any(t.name == "optimizer_step" for t in result.estimate.terms)


# Fixes that change only the saved activations, the loss's logits and a layer's transient
# (batch size, checkpointing, the fused loss, the sequence length): never the weights, the
# gradients, the optimizer's states or its step.
ACTIVATION_FIXES = frozenset(("batch", "checkpointing", "chunked_loss", "shorter_context"))


def cheap_floor(result: EstimateResult) -> int:
    """Bytes per card that no `CHEAP` fix takes off: the weights and the CUDA context. A
    cheap fix is a setting of the same run (batch, checkpointing, the loss, the optimizer's
    states, the serving engine's flags, the KV cache): the model, its format and its split
    stay, and every estimate's total holds its weights terms (resident, never rebalanced)
    and the context. A card whose cap is under this needs no trial estimate to say that no
    cheap fix makes it comfortable (bench/speed.py's questions: 7.7 -> 7.0 lean estimates
    each). Checked over eval/golden.py's corpus: all 11,682 cheap trials estimated there
    came out at or above their floor (tests/test_recommend_cheap_floor.py checks a sample of
    workloads on every count)."""
    est = result.estimate
    if est is None:
        return 0
    # the context: PyTorch's, or a runtime's own where smaller (llama.cpp's, no slack)
    overhead = sum(t.bytes for t in est.terms if t.name == "runtime_overhead")
    context = min(overhead, CUDA_CONTEXT_BYTES) if overhead else CUDA_CONTEXT_BYTES
    return sum(t.bytes for t in est.terms if t.name == "weights") + context


class CheapFixes:
    """`fixes_for(result, gpu, only_cheap=True, limit=1, blocked=...)` for every card of one
    recommendation: the cheap candidates of each estimate are listed once, each trial
    estimated at most once and only when a card first needs it (as `fixes_for` with a
    shared `trials` would), and each card then only compares bytes and checks its kernels.
    With a limit of one, the first fix that fits is the answer, so no kind is skipped."""

    def __init__(self) -> None:
        # (id(result), blocked) -> (result, candidates not yet listed, listed entries,
        # floor); an entry is (code, make, trial, reqs, changes nothing), trial None until
        # estimated, False on error, reqs None until a card's cap admits the trial
        self._by_result: dict[tuple[int, bool], tuple[EstimateResult, Iterator, list, int]] = {}

    def first(
        self, result: EstimateResult, gpu: GpuSpec, blocked: bool
    ) -> tuple[str, EstimateResult] | None:
        key = (id(result), blocked)
        state = self._by_result.get(key)
        if state is None or state[0] is not result:
            # every cheap candidate is a setting (no costlier fix is cheap)
            source = unblocking_fixes(result) if blocked else setting_fixes(result)
            cheap = ((c, m) for c, m in source if c.partition(":")[0] in CHEAP)
            state = self._by_result[key] = (result, cheap, [], cheap_floor(result))
        _, pending, listed, floor = state
        cap = gpu.usable_vram_bytes * (1 - HEADROOM)
        if floor > cap:
            return None  # every cheap fix's estimate is over the cap: none is tried
        i = 0
        while True:
            if i == len(listed):
                nxt = next(pending, None)
                if nxt is None:
                    return None
                listed.append([nxt[0], nxt[1], None, None, _cannot_lower(nxt[0], result)])
            entry = listed[i]
            i += 1
            code = entry[0]
            if entry[4] and (result.estimate is None or result.estimate.total_bytes > cap):
                continue  # its estimate would be this one's, over the cap as this one is
            if entry[2] is None:
                try:
                    entry[2] = trial_estimate(entry[1]())
                except ValueError:
                    entry[2] = False
            trial = entry[2]
            if trial is False or trial.estimate is None or trial.estimate.total_bytes > cap:
                continue
            if entry[3] is None:  # read only for a change that fits some card
                entry[3] = applicable(trial)
            if blockers(gpu, trial, entry[3]):
                continue
            return code, trial


# Settings of the same run on the same cards, stacked when no one of them alone makes it fit
# (70B AWQ at 32k on two 3090s: a lean vLLM, fp8 KV cache and a shorter context together;
# a ZeRO-3 full fine-tune on 8× 4090: micro-batch 1, a fused loss, optimizer offload),
# so that "rent more cards" is never the first advice while the user's own cards can run
# it. For vLLM the whole lean flag set (its label names every flag); for training no
# shorter sequences (they change what is learned).
STACK_TRAINING = ("batch", "checkpointing", "chunked_loss", "optimizer_8bit", "offload")
STACK_INFERENCE = (
    "vllm_lean",
    "vllm_lean_tp",
    "kv_fp8",
    "kv_q8_ollama",
    "kv_q8_llamacpp",
    "kv_q4_exllama",
    "shorter_context",
)
STACK_STEPS = 8


def stacked_fix(
    result: EstimateResult, gpu: GpuSpec, extra: tuple[str, ...] = ()
) -> tuple[str, bool] | None:
    """("stack:<code>+<code>…", tight) for settings that together make `result` run on
    `gpu` at the same count, each one kept only where it lowers the figure, taken in
    `candidate_fixes`' order (cheapest first; a shorter context halved until it fits); with
    the guide's headroom when reachable, else tight (`runs_in`). None when even all of them
    do not, or one alone would do (then `fixes_for` already names it)."""
    training = result.workload.mode.is_training
    if not tp_ok(result, result.workload.num_gpus):
        return None  # no setting makes tensor parallelism take a count the heads refuse
    allowed = (STACK_TRAINING if training else STACK_INFERENCE) + extra
    comfortable = gpu.usable_vram_bytes * (1 - HEADROOM)
    current, applied = result, []  # type: ignore[var-annotated]
    tight: tuple[str, bool] | None = None
    for _ in range(STACK_STEPS):
        if current.estimate is None:
            return tight
        step = None
        kinds = {a.partition(":")[0] for a in applied}
        # the extra kinds first (a smaller format before the context is halved for it)
        ordered = sorted(
            candidate_fixes(current), key=lambda c: c[0].partition(":")[0] not in extra
        )
        for code, make in ordered:
            kind = code.partition(":")[0]
            if kind not in allowed or (kind in kinds and kind != "shorter_context"):
                continue
            try:
                trial = trial_estimate(make())
            except ValueError:
                continue
            if trial.estimate is None or trial.estimate.total_bytes >= current.estimate.total_bytes:
                continue
            if blockers(gpu, trial):
                continue  # a setting this card cannot run (vLLM's fp8 KV cache on a 3090)
            step = (code, trial)
            break
        if step is None:
            return tight
        code, current = step
        applied = [a for a in applied if a.partition(":")[0] != code.partition(":")[0]] + [code]
        total = current.estimate.total_bytes  # type: ignore[union-attr]
        if (
            len(applied) > 1
            and runs_in(total, gpu.usable_vram_bytes)
            and not blockers(gpu, current)
        ):
            found = ("stack:" + "+".join(applied), total > comfortable)
            if not found[1]:
                return found
            # tight: kept only while no smaller change runs. Halving the context further
            # buys headroom only where the headroom can be reached: 70B AWQ on two 3090s
            # ran tight at 16k and was answered "shorten to 2048", tight still
            tight = tight or found
            if not _headroom_reachable(current, gpu):
                return tight
    return tight


def _headroom_reachable(result: EstimateResult, gpu: GpuSpec) -> bool:
    """Whether everything but the KV cache leaves the guide's 20% free: if not, no shorter
    context brings the run to a comfortable fit, only further from what was asked."""
    est = result.estimate
    if est is None:
        return False
    kv = sum(t.bytes for t in est.terms if t.name == "kv_cache")
    return est.total_bytes - kv <= gpu.usable_vram_bytes * (1 - HEADROOM)
