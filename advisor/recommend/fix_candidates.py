"""The changes that could make a setup fit, in order of cost to the user: settings of the
same run (`setting_fixes`, every `CHEAP` one among them), then the costlier ones (a shorter
context, a smaller format, another recipe, offload, more cards), then the named setup's own
(setup_fixes); and the changes that let a card run a job it cannot run at all
(`unblocking_fixes`). fixes.py tries them; this module only lists them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain

from advisor.catalog import find_format
from advisor.constraints import kv_cache_type, runtime_of
from advisor.memory.runtimes import SERVING_ENGINES
from advisor.memory.stacks import chunked_by_default
from advisor.models.architecture import Architecture
from advisor.models.choices import Kind, Mode, Offload, Optimizer, Parallelism, Runtime
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.card_counts import COUNTS, ONE_MACHINE, workload_for
from advisor.recommend.recipes import recipe_fixes
from advisor.recommend.setup_fixes import offered, own_fixes

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
    "kv_int8_lmdeploy",
    "vllm_lean",
    "vllm_lean_tp",
)
# Fixes that stream weights from CPU RAM every step: several times slower. A change that
# fits (even tight) at full speed is advised before them.
SLOW = (
    "offload_params",
    "offload_sequential",
    "offload_sequential_one_image",
    "cpu_moe",
    "gpu_layers",
)
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
    Runtime.lmdeploy: ("kv_int8_lmdeploy", "int8"),  # --quant-policy 8 (data/kv_cache.toml)
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
        if result.estimate is not None and result.estimate.runtime in SERVING_ENGINES:
            yield llamacpp_route(result)
    if w.attention is not None and w.attention.value == "flash":
        yield "attention_sdpa", lambda: w.model_copy(update={"attention": "sdpa"})


# The GGUF type llama.cpp runs for a model asked in a serving engine's format, by the
# format's bits: Q4_K_M is the 4-bit file people run (llama.cpp README, "quantize"
# recommendations), Q8_0 the 8-bit one; 16-bit weights stay F16.
GGUF_FOR_BITS = ((5.0, "q4_k_m"), (8.0, "q8_0"))
# The serving engine's own knobs, which llama.cpp does not have.
SERVING_KNOBS = (
    "max_num_batched_tokens",
    "max_num_seqs",
    "gpu_memory_utilization",
    "cuda_graphs",
    "custom_all_reduce",
)


def llamacpp_route(result: EstimateResult) -> tuple[str, Callable[[], Workload]]:
    """The same model in llama.cpp, in the GGUF type of the asked format's bits, where the
    card cannot run the serving engine asked (vLLM / SGLang / TGI need CC 7.0+: a Pascal
    P40 runs llama.cpp): `llamacpp:q4_k_m`."""
    w = result.workload
    bits = _bits(w, result)
    fmt = next((f for top, f in GGUF_FOR_BITS if bits <= top), "fp16")
    update: dict = {k: None for k in SERVING_KNOBS}
    kv = w.kv_cache_dtype if w.kv_cache_dtype in ("q8_0", "q4_0", "fp16") else None
    update |= {
        "runtime": Runtime.llamacpp,
        "framework": "llama.cpp",
        "weights_format": fmt,
        "kv_cache_dtype": kv,
    }
    return f"llamacpp:{fmt}", partial(w.model_copy, update=update)


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
    if training:
        yield from smaller_batch_fixes(w, w.batch_size or framework_batch or 1)
    if training and not w.gradient_checkpointing:
        yield "checkpointing", lambda: w.model_copy(update={"gradient_checkpointing": True})
    # (a stack whose recipes chunk their loss already runs one: data/training_stacks.toml [loss])
    if (
        training
        and model.kind == Kind.llm
        and not w.chunked_loss
        and not chunked_by_default(w.framework)
    ):
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
    yield from shorter_context_fixes(result)
    rungs = list(recipe_fixes(result)) if model.kind == Kind.diffusion else []
    # The small-card recipe ladder (recipes.py): slicing and tiling, components taking
    # turns, text encoders off the GPU, one image at a time; for LoRA, the frozen base in
    # fp8 or NF4. Before quantizing: the images stay as they are. Layers streamed from RAM
    # (`SLOW`, several times slower) after it: a smaller format at full speed costs less.
    yield from (r for r in rungs if r[0] not in SLOW)
    yield from quantize_fixes(result)
    yield from (r for r in rungs if r[0] in SLOW)
    gguf_runtime = runtime in (Runtime.llamacpp, Runtime.ollama, Runtime.lmstudio)
    arch = model.arch
    if not training and model.kind == Kind.llm and gguf_runtime and arch is not None:
        yield from _cpu_side_fixes(w, arch, runtime)
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


def smaller_batch_fixes(w: Workload, batch: int) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """The micro-batch halved, down to 1, each halving its own change (gradient accumulation
    keeps the effective batch): the largest that fits is the advice, not batch 1 where half
    the batch would do (YOLOv5x at batch 16 on a 16 GB card: batch 8)."""
    while batch > 1:
        smaller = max(1, batch // 2)
        yield f"batch:{smaller}", partial(w.model_copy, update={"batch_size": smaller})
        batch = smaller


def shorter_context_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """The context (inference) or sequence length (training) halved, down to 2048 (512 for
    training), each halving its own change."""
    w = result.workload
    training = w.mode.is_training
    ctx = _context_of(result)
    if ctx is None:
        return
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


def context_fix(result: EstimateResult, tokens: int) -> Callable[[], Workload] | None:
    """The run at a context (sequence length) of `tokens`, any value: the longest that
    fits once a stack has found a halving that does (stacked_fixes). None for a job with
    no context."""
    ctx = _context_of(result)
    if ctx is None:
        return None
    extra = {} if result.workload.mode.is_training else {"prompt_tokens": None, "new_tokens": None}
    return partial(result.workload.model_copy, update={ctx[0]: tokens, **extra})


def quantize_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """Smaller number formats the answer's runtime loads, for LLM and diffusion inference,
    each on that runtime."""
    w, model = result.workload, result.model
    runtime = result.estimate.runtime if result.estimate else None
    if w.mode.is_training or model.kind not in (Kind.llm, Kind.diffusion):
        return
    bits = _bits(w, result)
    if runtime == Runtime.transformers and model.kind == Kind.llm:
        yield from _bnb_4bit_fix(w, bits, runtime)
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


# bitsandbytes formats: a user loading with them is shown the same library's 4-bit first.
BNB_FORMATS = ("int8", "nf4", "fp4")
# The same library's 4-bit as its docs set it up (transformers docs "bitsandbytes",
# BitsAndBytesConfig: load_in_4bit=True, bnb_4bit_quant_type="nf4",
# bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=torch.bfloat16; read 2026-12-07,
# https://huggingface.co/docs/transformers/quantization/bitsandbytes): double-quantized NF4,
# computed in 16 bits (left unset the compute dtype is float32, and every prompt's matmul
# holds an fp32 copy of the widest weight: data/quantizers.toml [dequant_per_call]). float16
# runs on every card (bfloat16 needs Ampere); both hold the same bytes.
BNB_4BIT = "nf4-dq"
BNB_4BIT_COMPUTE = "fp16"


def _bnb_4bit_fix(
    w: Workload, bits: float, runtime: Runtime
) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """For a model loaded through bitsandbytes in more than 4 bits (load_in_8bit): its own
    4-bit (`BNB_4BIT`) before any other library's checkpoint (AWQ, GPTQ)."""
    if w.weights_format not in BNB_FORMATS or bits <= 4.5:
        return
    update: dict[str, object] = {
        "weights_format": BNB_4BIT,
        "compute_dtype": w.compute_dtype or BNB_4BIT_COMPUTE,
        "runtime": runtime,
    }
    torch_name = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
    code = f"bnb_4bit:{torch_name[str(update['compute_dtype'])]}"
    yield code, partial(w.model_copy, update=update)


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


def _cpu_side_fixes(
    w: Workload, arch: Architecture, runtime: Runtime | None
) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """A GGUF runtime's own ways to leave part of the model to the CPU: a layer split
    (-ngl; Ollama's num_gpu, which Ollama picks by itself) and, for a MoE model, the
    experts of the fewest layers in RAM with every layer's attention and shared weights on
    the card (llama.cpp --n-cpu-moe; data/runtimes.toml [llamacpp_moe_offload]), faster
    than a layer split. Ollama has no expert offload: there it comes after its own split.
    Each count is found in fixes_for; the codes here are markers."""
    on_card = arch.layers if w.n_gpu_layers is None else w.n_gpu_layers
    out: list[tuple[str, Callable[[], Workload]]] = []
    if arch.experts and not w.n_cpu_moe and on_card == arch.layers:
        out.append(
            (f"cpu_moe:{arch.layers}", partial(w.model_copy, update={"n_cpu_moe": arch.layers}))
        )
    layers = min(int(arch.layers * GPU_LAYER_SHARE), on_card - 1)
    if layers > 0:
        split = (f"gpu_layers:{layers}", partial(w.model_copy, update={"n_gpu_layers": layers}))
        out.insert(0 if runtime == Runtime.ollama else len(out), split)
    yield from out
