"""Peak GPU memory per card, as a breakdown of named terms.

Each term is one small function with its formula and source in the docstring (the
EleutherAI "Transformer Math 101" way), so the reply can show the same terms. Two views:

* allocated — tensors only, what `torch.cuda.max_memory_allocated()` reports;
* total — what nvidia-smi shows: allocated + CUDA context + caching-allocator slack.

Where the physics is uncertain we err high: an under-estimate sends a user into OOM after
they paid; an over-estimate costs them a slightly bigger card.
"""

from __future__ import annotations

import math
import re

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.models import (
    Architecture,
    Assumption,
    Attention,
    Confidence,
    Estimate,
    EstimateResult,
    Kind,
    Mode,
    Offload,
    Optimizer,
    Parallelism,
    ResolvedModel,
    Term,
    Workload,
)

GIB = 2**30

# CUDA context + cuBLAS/cuDNN workspaces, outside torch's allocator. HF "Efficient
# training on a single GPU" measured ~1343 MiB on a V100 (CUDA 11, eager module loading);
# PyTorch >= 2.1 with lazy loading (CUDA 11.7+) needs ~0.5 GiB. We keep the larger figure:
# an under-estimate is the costly error.
CUDA_CONTEXT_BYTES = int(1.25 * GIB)
# NCCL communicator buffers per card once more than one GPU talks (NCCL_BUFFSIZE 4 MiB
# per channel x peers x protocols; ~0.5 GiB observed on 8-GPU nodes, llm-d non_torch 0.6).
NCCL_BYTES = GIB // 2
# Caching-allocator slack (reserved - allocated) at the peak: a few percent in inference,
# ~5% in training where tensor sizes vary (PyTorch CUDA memory-management notes).
SLACK_INFERENCE = 0.03
SLACK_TRAINING = 0.05
# KV cache length a static-cache framework pre-allocates when not told otherwise.
STATIC_CACHE_FRAMEWORKS = {"torchtune", "gpt-fast", "tensorrt-llm", "trt-llm"}
# HF generate() concatenates the cache each step (tuple / DynamicCache torch.cat): the old
# and new copies coexist at the step's peak. Measured: optimum benchmark_gptq.py,
# Llama-2-13B fp16, 512+512 tokens, batch 1..16 (peak grows by 2 x KV).
CONCAT_CACHE_FRAMEWORKS = {"transformers", "hf", "huggingface", "optimum"}
# Frameworks whose default recipes use torch's fused AdamW (no foreach step buffer):
# torchtune recipes/configs (e.g. llama3_2/3B_full_single_device.yaml, optimizer fused: True).
FUSED_OPTIMIZER_FRAMEWORKS = {"torchtune"}
# PEFT keeps adapters in fp32 and casts the layer input to fp32 for them.
PEFT_FRAMEWORKS = {None, "peft", "trl", "transformers", "llama-factory", "axolotl"}
ENCODER_FAMILIES = {"bert", "roberta", "vit"}  # classification heads, no LM logits


class UnknownModelError(ValueError):
    """The workload names a model the catalog does not hold and gives no size."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        super().__init__(f"model: unknown model {name!r}")


class UnknownFormatError(ValueError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"weights_format: unknown format {name!r}")


# --------------------------------------------------------------------------------------
# Resolving the model and the defaults
# --------------------------------------------------------------------------------------

# (params_b, layers, hidden): interpolation anchors for a model known only by its size,
# from the Llama/Qwen families' config.json (Qwen2.5-0.5B ... Llama-3.1-405B).
_SIZE_ANCHORS = [
    (0.5, 24, 896),
    (1.5, 28, 1536),
    (3.0, 28, 3072),
    (7.0, 32, 4096),
    (13.0, 40, 5120),
    (34.0, 60, 7168),
    (70.0, 80, 8192),
    (180.0, 96, 12288),
    (405.0, 126, 16384),
    (1000.0, 160, 20480),
]


def assumed_architecture(params_b: float) -> Architecture:
    """A Llama-like architecture for a bare parameter count (GQA with 8 KV heads)."""
    anchors = _SIZE_ANCHORS
    if params_b <= anchors[0][0]:
        _, layers, hidden = anchors[0]
    elif params_b >= anchors[-1][0]:
        _, layers, hidden = anchors[-1]
    else:
        for (p0, l0, h0), (p1, l1, h1) in zip(anchors, anchors[1:], strict=False):
            if p0 <= params_b <= p1:
                t = (math.log(params_b) - math.log(p0)) / (math.log(p1) - math.log(p0))
                layers = round(l0 + t * (l1 - l0))
                hidden = int(round((h0 + t * (h1 - h0)) / 128) * 128)
                break
    heads = max(hidden // 128, 1)
    return Architecture(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=min(8, heads),
        head_dim=128,
        intermediate=int(hidden * 3.5),
        vocab=128256,
        max_context_tokens=131072,
    )


def resolve_model(w: Workload) -> tuple[ResolvedModel, ModelSpec | None]:
    spec = catalog.find_model(w.model) if w.model else None
    if w.model and spec is None and w.params_b is None and w.arch is None:
        raise UnknownModelError(w.model, catalog.close_model_names(w.model))
    if spec is not None:
        arch = w.arch or spec.arch
        return (
            ResolvedModel(
                id=spec.id,
                name=spec.name,
                kind=spec.kind,
                params_b=w.params_b or spec.params_b,
                active_params_b=w.active_params_b or spec.active_b,
                arch=arch,
                from_catalog=True,
                source=spec.source,
            ),
            spec,
        )
    kind = w.kind or Kind.llm
    if kind in (Kind.rendering, Kind.video, Kind.simulation):
        return ResolvedModel(
            id=None,
            name=kind.value,
            kind=kind,
            params_b=0.0,
            active_params_b=0.0,
            arch=None,
            from_catalog=False,
        ), None
    params_b = w.params_b or _params_from_arch(w.arch)
    arch = w.arch or (assumed_architecture(params_b) if kind == Kind.llm else None)
    return (
        ResolvedModel(
            id=None,
            name=w.model or f"{params_b:g}B",
            kind=kind,
            params_b=params_b,
            active_params_b=w.active_params_b or params_b,
            arch=arch,
            from_catalog=False,
        ),
        None,
    )


def _params_from_arch(arch: Architecture | None) -> float:
    if arch is None:
        raise ValueError("params_b: give a parameter count or an architecture")
    per_layer = 4 * arch.hidden**2 + 3 * arch.hidden * arch.intermediate_
    return (arch.layers * per_layer + 2 * arch.vocab * arch.hidden) / 1e9


# --------------------------------------------------------------------------------------
# LLM terms
# --------------------------------------------------------------------------------------


def embedding_params(arch: Architecture) -> int:
    """Input embedding plus lm_head (shared when tied): vocab x hidden each."""
    return arch.vocab * arch.hidden * (1 if arch.tied_embeddings else 2)


def estimate_weight_bytes(params: float, arch: Architecture | None, fmt: str) -> int:
    """params x bits/8. Formats with scope "linear" (GPTQ, AWQ, bitsandbytes, fp8, quanto)
    leave embeddings and lm_head in 16-bit, as their checkpoints do."""
    spec = catalog.find_format(fmt)
    if spec is None:
        raise UnknownFormatError(fmt)
    if spec.scope == "linear" and arch is not None:
        emb = min(embedding_params(arch), params)
        return int((params - emb) * spec.bits / 8 + emb * 2)
    return int(params * spec.bits / 8)


def kv_bytes_per_token(
    arch: Architecture, kv_dtype: str, context: int, framework: str | None
) -> float:
    """Per token: sum over layers of 2 (K and V) x kv_heads x head_dim x bytes; sliding-
    window layers hold at most `window` tokens; DeepSeek MLA stores the compressed latent
    (kv_lora_rank + rope dim) per layer. Sources: llama.cpp llama-kv-cache.cpp
    (n_embd_k_gqa), vLLM kv_cache_interface.py page_size_bytes, DeepSeek-V2 paper §2.1."""
    b = catalog.kv_cache_bytes_per_element()[kv_dtype]
    if arch.kv_lora_rank and framework not in CONCAT_CACHE_FRAMEWORKS:
        return arch.layers * (arch.kv_lora_rank + (arch.qk_rope_head_dim or 64)) * b
    per_layer = 2 * arch.kv_heads_ * arch.head_dim_ * b
    if arch.sliding_window and arch.sliding_layers_fraction > 0 and context > 0:
        swa_layers = arch.layers * arch.sliding_layers_fraction
        full_layers = arch.layers - swa_layers
        window_share = min(arch.sliding_window, context) / context
        return per_layer * (full_layers + swa_layers * window_share)
    return per_layer * arch.layers


def mlp_width(arch: Architecture) -> int:
    """Width of the MLP a token passes through: the dense intermediate, or the routed
    experts' widths summed (top-k x expert width, plus shared experts)."""
    if arch.experts and arch.moe_intermediate:
        k = arch.experts_per_token or 2
        return arch.moe_intermediate * (k + arch.shared_experts)
    return arch.intermediate_


def _lora_target_dims(arch: Architecture, targets: str | None) -> list[tuple[int, int]]:
    """(in, out) of each adapted Linear in one layer. PEFT's default for Llama-style models
    is q_proj,v_proj; 'all-linear' adapts every projection."""
    h, hd = arch.hidden, arch.head_dim_
    q_out, kv_out, inter = arch.heads * hd, arch.kv_heads_ * hd, mlp_width(arch)
    dims = {
        "q": (h, q_out),
        "k": (h, kv_out),
        "v": (h, kv_out),
        "o": (q_out, h),
        "gate": (h, inter),
        "up": (h, inter),
        "down": (inter, h),
    }
    text = (targets or "q_proj,v_proj").lower()
    if "all" in text:
        return list(dims.values())
    picked: list[tuple[int, int]] = []
    for key, pattern in {
        "q": r"\bq(_proj)?\b|to_q",
        "k": r"\bk(_proj)?\b|to_k",
        "v": r"\bv(_proj)?\b|to_v",
        "o": r"o_proj|output_proj|to_out|out_proj",
        "gate": r"gate|w1",
        "up": r"up_proj|w3",
        "down": r"down|w2",
    }.items():
        if re.search(pattern, text):
            picked.append(dims[key])
    if "mlp" in text and not any(k in text for k in ("gate", "w1", "up_proj", "down")):
        picked += [dims["gate"], dims["up"], dims["down"]]
    return picked or [dims["q"], dims["v"]]


def trainable_params(w: Workload, arch: Architecture | None, params: float) -> float:
    """How many parameters receive gradients and optimizer state."""
    mode = w.mode
    if mode in (Mode.full, Mode.pretrain) or arch is None:
        return params if mode in (Mode.full, Mode.pretrain) else params * 0.01
    if mode in (Mode.lora, Mode.qlora, Mode.dora):
        rank = w.lora_rank or 8
        dims = _lora_target_dims(arch, w.lora_targets)
        per_layer = sum(rank * (i + o) for i, o in dims)
        if mode == Mode.dora:
            per_layer += sum(o for _, o in dims)  # magnitude vector per output
        return per_layer * arch.layers
    if mode == Mode.ia3:
        return arch.layers * (2 * arch.kv_heads_ * arch.head_dim_ + mlp_width(arch))
    if mode == Mode.prompt_tuning:
        return 200 * arch.hidden  # PEFT examples: 20-200 virtual tokens
    if mode == Mode.freeze:
        # LLaMA-Factory freeze-tuning default: the last 2 layers train.
        return min(2, arch.layers) / arch.layers * (params - embedding_params(arch))
    return 0.0


def optimizer_state_bytes_per_param(opt: Optimizer, param_bytes: int, master_fp32: bool) -> float:
    """AdamW keeps two moments in the parameter dtype (torch.optim.AdamW); bitsandbytes
    8-bit Adam one byte each (arXiv 2110.02861); SGD momentum and Lion one buffer;
    Adafactor factored second moments (rows + cols, ~0 per parameter; arXiv 1804.04235).
    Mixed precision with 16-bit parameters adds fp32 master weights (4 B)."""
    per = {
        Optimizer.adamw: 2 * param_bytes,
        Optimizer.adamw_8bit: 2.0,
        Optimizer.paged_adamw_8bit: 2.0,
        Optimizer.sgd: 0.0,
        Optimizer.sgd_momentum: float(param_bytes),
        Optimizer.lion: float(param_bytes),
        Optimizer.adafactor: 0.02 * param_bytes,
    }[opt]
    return per + (4 if master_fp32 else 0)


def activation_bytes_per_token_layer(
    arch: Architecture, seq: int, attention: Attention, elem_bytes: float, dropout: bool
) -> float:
    """Activations one transformer layer saves for backward, per token.

    Korthikanti et al. 2022 (arXiv 2205.05198, Table 2) give sbh(34 + 5as/h) for a GELU
    MLP at 16-bit. Written out per saved tensor for today's models: two fp32-upcast
    RMSNorms (4+2+2 bytes x h each), q/k/v/attention-out (4h + 4h_kv), a gated MLP 8I
    (gate, up, act, product) or GELU 4I; eager attention adds the softmax (fp32 + 16-bit
    copy) heads x seq x 6; dropout adds 1-byte masks. Scaled by elem_bytes/2 for fp32.
    """
    h, kv = arch.hidden, arch.kv_heads_ * arch.head_dim_
    inter = mlp_width(arch)
    scale = elem_bytes / 2
    base = (20 * h + 4 * kv) * scale
    mlp = (8 if arch.gated_mlp else 4) * inter * scale
    attn = 0.0
    if attention == Attention.eager:
        attn = arch.heads * seq * (6 if elem_bytes <= 2 else 8)
    elif attention == Attention.sliced:
        attn = arch.heads * seq * 3
    masks = 0.0
    if dropout:
        masks = (
            2 * h
            + inter
            + (arch.heads * seq * (1 + 2 * scale) if attention == Attention.eager else 0)
        )
    return base + mlp + attn + masks


# --------------------------------------------------------------------------------------
# The estimate
# --------------------------------------------------------------------------------------


class _Acc:
    """Collects terms and the assumptions made while computing them."""

    def __init__(self) -> None:
        self.terms: list[Term] = []
        self.assumed: list[Assumption] = []

    def add(self, name: str, value: float, formula: str) -> int:
        b = max(int(value), 0)
        if b > 0:
            self.terms.append(Term(name=name, bytes=b, formula=formula))
        return b

    def assume(self, field: str, value: object) -> None:
        self.assumed.append(Assumption(field=field, value=str(value)))


def _gib(b: float) -> str:
    return f"{b / GIB:.2f} GiB"


def estimate(w: Workload) -> EstimateResult:
    """Estimate peak memory per GPU for a workload."""
    model, spec = resolve_model(w)
    acc = _Acc()
    if model.kind in (Kind.rendering, Kind.video, Kind.simulation):
        return EstimateResult(workload=w, model=model, estimate=None, assumed=[])
    if model.kind == Kind.diffusion:
        if spec is None or spec.diffusion is None:
            spec = generic_diffusion_spec(model.params_b)
            acc.assume("pipeline", "generic DiT (all parameters in the denoiser)")
        est = _estimate_diffusion(w, spec, acc)
    elif model.kind == Kind.classic and (spec is None or spec.arch is None) and w.arch is None:
        est = _estimate_classic_cnn(w, model, spec, acc)
    else:
        est = _estimate_transformer(w, model, spec, acc)
    return EstimateResult(workload=w, model=model, estimate=est, assumed=acc.assumed)


def _finish(
    acc: _Acc, allocated: int, w: Workload, training: bool, band: tuple[float, float]
) -> Estimate:
    overhead = CUDA_CONTEXT_BYTES + (NCCL_BYTES if w.num_gpus > 1 else 0)
    slack = int(allocated * (SLACK_TRAINING if training else SLACK_INFERENCE))
    total = allocated + overhead + slack
    acc.terms.append(
        Term(
            name="runtime_overhead",
            bytes=overhead + slack,
            formula=f"CUDA context {_gib(CUDA_CONTEXT_BYTES)}"
            + (f" + NCCL {_gib(NCCL_BYTES)}" if w.num_gpus > 1 else "")
            + f" + allocator slack {int((SLACK_TRAINING if training else SLACK_INFERENCE) * 100)}%",
        )
    )
    lo, hi = band
    width = max(lo, hi)
    confidence = (
        Confidence.high if width <= 0.15 else Confidence.medium if width <= 0.3 else Confidence.low
    )
    return Estimate(
        per_gpu=True,
        num_gpus=w.num_gpus,
        terms=acc.terms,
        allocated_bytes=allocated,
        total_bytes=total,
        low_bytes=int(total * (1 - lo)),
        high_bytes=int(total * (1 + hi)),
        confidence=confidence,
    )


def _default_format(w: Workload, spec: ModelSpec | None, acc: _Acc) -> str:
    if w.weights_format:
        if catalog.find_format(w.weights_format) is None:
            raise UnknownFormatError(w.weights_format)
        return catalog.find_format(w.weights_format).id  # type: ignore[union-attr]
    if w.mode == Mode.qlora:
        fmt = "nf4"
    elif spec is not None and spec.default_format:
        fmt = spec.default_format
    elif w.mode.is_training and w.mixed_precision:
        fmt = "fp32"
    else:
        fmt = "bf16"
    acc.assume("weights_format", fmt)
    return fmt


def _estimate_transformer(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: _Acc
) -> Estimate:
    arch = model.arch
    assert arch is not None
    params = model.params_b * 1e9
    fmt = _default_format(w, spec, acc)
    n = w.num_gpus
    par = w.parallelism or (Parallelism.none if n == 1 else None)
    if par is None:
        par = Parallelism.tp if not w.mode.is_training else Parallelism.zero3
        acc.assume("parallelism", par.value)
    framework = w.framework.lower() if w.framework else None
    attention = w.attention or Attention.sdpa
    if w.attention is None:
        acc.assume("attention", "sdpa")

    if fmt == "nf4" and framework == "torchtune":
        fmt = "nf4-dq"  # torchao's NF4 (torchtune QLoRA) double-quantizes its scalers
    weight_bytes = estimate_weight_bytes(params, arch, fmt)
    weight_formula = f"{model.params_b:g}B params x {catalog.find_format(fmt).bits:g} bits ({fmt})"  # type: ignore[union-attr]
    # Tensor and pipeline parallel split the weights; ZeRO-3/FSDP shard them.
    split = n if par in (Parallelism.tp, Parallelism.pp, Parallelism.zero3, Parallelism.fsdp) else 1
    if w.mode.is_training:
        return _estimate_training(
            w,
            model,
            spec,
            acc,
            arch,
            params,
            fmt,
            weight_bytes,
            weight_formula,
            par,
            split,
            attention,
            framework,
        )

    # ---- inference ----
    batch = w.batch_size or 1
    if w.batch_size is None:
        acc.assume("batch_size", 1)
    if w.context_tokens:
        prompt = w.prompt_tokens or max(w.context_tokens - (w.new_tokens or 0), 1)
        context = w.context_tokens
    elif w.prompt_tokens is not None or w.new_tokens is not None:
        prompt = w.prompt_tokens or 1
        context = prompt + (w.new_tokens or 0)
    else:
        context = min(4096, arch.max_context_tokens)
        prompt = context
        acc.assume("context_tokens", context)
    if w.mode == Mode.load_only:
        allocated = acc.add(
            "weights",
            weight_bytes / split,
            weight_formula + (f" / {split} cards" if split > 1 else ""),
        )
        return _finish(acc, allocated, w, False, _band(model, spec, False))

    kv_dtype = w.kv_cache_dtype or ("fp16" if fmt in ("fp16", "fp32") else "bf16")
    if w.kv_cache_dtype is None:
        acc.assume("kv_cache_dtype", kv_dtype)
    cache_len = context
    if framework in STATIC_CACHE_FRAMEWORKS and w.context_tokens is None:
        cache_len = max(context, min(arch.max_context_tokens, 8192))
    per_tok = kv_bytes_per_token(arch, kv_dtype, cache_len, framework)
    kv_split = n if par == Parallelism.tp else 1
    kv = per_tok * cache_len * batch / kv_split
    concat = framework in CONCAT_CACHE_FRAMEWORKS

    w_b = acc.add(
        "weights", weight_bytes / split, weight_formula + (f" / {split} cards" if split > 1 else "")
    )
    kv_b = acc.add(
        "kv_cache",
        kv,
        f"{per_tok / 1024:.0f} KiB/token ({arch.layers} layers x {arch.kv_heads_} KV heads x "
        f"{arch.head_dim_} x 2 x {kv_dtype}) x {cache_len} tokens x batch {batch}"
        + (f" / {kv_split} cards" if kv_split > 1 else ""),
    )
    # Prefill: one layer's transients for every prompt token at once (engines chunk it).
    prefill_tokens = batch * prompt
    if framework in ("vllm", "sglang"):
        prefill_tokens = min(prefill_tokens, 8192)
    h = arch.hidden
    act_per_token = (6 * h + 4 * mlp_width(arch) / kv_split) * 2  # 16-bit buffers of one layer
    attn = 0.0
    if attention == Attention.eager:
        attn = batch * arch.heads / kv_split * prompt * prompt * 6
    logits_tokens = prefill_tokens if concat else batch
    logits = logits_tokens * arch.vocab * 6 / kv_split  # 16-bit logits + fp32 upcast
    # Layer buffers are freed before the lm_head runs: the prefill peak is one or the other.
    prefill = max(prefill_tokens * act_per_token + attn, logits)
    # The concatenated copy exists at decode steps only: generating one token is a prefill.
    decodes = w.new_tokens is None or w.new_tokens > 1
    decode_extra = kv if concat and decodes else 0.0
    if prefill >= decode_extra:
        act_b = acc.add(
            "activations",
            prefill,
            f"prefill of {prefill_tokens} tokens: hidden/MLP buffers of one layer"
            + (" + eager attention scores" if attn else "")
            + f" + logits over {arch.vocab} tokens",
        )
    else:
        act_b = acc.add(
            "activations",
            decode_extra,
            "decode step: generate() concatenates the KV cache, old and new copies coexist",
        )
    allocated = w_b + kv_b + act_b
    return _finish(acc, allocated, w, False, _band(model, spec, False))


def _band(model: ResolvedModel, spec: ModelSpec | None, training: bool) -> tuple[float, float]:
    if spec is None:
        lo, hi = 0.15, 0.40  # architecture guessed from the size alone
    elif spec.checked:
        lo, hi = 0.08, 0.10
    else:
        lo, hi = 0.10, 0.15
    if training:
        lo, hi = lo + 0.07, hi + 0.10
    return lo, hi


def _estimate_training(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    acc: _Acc,
    arch: Architecture,
    params: float,
    fmt: str,
    weight_bytes: int,
    weight_formula: str,
    par: Parallelism,
    split: int,
    attention: Attention,
    framework: str | None,
) -> Estimate:
    n = w.num_gpus
    batch = w.batch_size or 1
    if w.batch_size is None:
        acc.assume("batch_size", 1)
    seq = w.seq_len or w.context_tokens or min(2048, arch.max_context_tokens)
    if w.seq_len is None and w.context_tokens is None:
        acc.assume("seq_len", seq)
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = w.gradient_checkpointing
    if gc is None:
        gc = model.params_b >= 1.0
        acc.assume("gradient_checkpointing", "on" if gc else "off")
    ga = w.gradient_accumulation or 1
    compute = w.compute_dtype or ("fp32" if fmt == "fp32" and not w.mixed_precision else "bf16")
    full = w.mode in (Mode.full, Mode.pretrain)
    mixed = w.mixed_precision if w.mixed_precision is not None else False
    # AMP autocasts softmax and layer norms to fp32: saved activations average ~2.5 B.
    elem = 4 if compute == "fp32" else (2.5 if fmt == "fp32" else 2)
    dropout = (spec is not None and spec.family in ENCODER_FAMILIES) or model.kind == Kind.classic

    trainable = trainable_params(w, arch, params)
    # Parameter storage dtype of the trained weights: fp32 under AMP (fp32 weights), else
    # the weights' own 16-bit type. PEFT adapters are kept in fp32.
    if full:
        param_bytes = 4 if fmt == "fp32" else 2
    else:
        param_bytes = 4 if framework in PEFT_FRAMEWORKS or fmt == "fp32" else 2
    master = full and mixed and param_bytes == 2
    offload_opt = w.cpu_offload in (Offload.optimizer, Offload.params)
    offload_params = w.cpu_offload == Offload.params

    shard_states = (
        n
        if par
        in (
            Parallelism.zero1,
            Parallelism.zero2,
            Parallelism.zero3,
            Parallelism.fsdp,
            Parallelism.tp,
            Parallelism.pp,
        )
        else 1
    )
    shard_grads = (
        n
        if par
        in (Parallelism.zero2, Parallelism.zero3, Parallelism.fsdp, Parallelism.tp, Parallelism.pp)
        else 1
    )

    # Weights.
    if offload_params:
        w_b = 0
    else:
        w_b = acc.add(
            "weights",
            weight_bytes / split,
            weight_formula + (f" / {split} cards" if split > 1 else ""),
        )
    # AMP keeps a 16-bit copy of fp32 weights for the matmuls (autocast cache, saved for
    # backward); ZeRO-3/FSDP gather 16-bit layers a few at a time instead.
    layer_params = (params - embedding_params(arch)) / arch.layers
    if split > 1 and par in (Parallelism.zero3, Parallelism.fsdp):
        gather_bits = min(catalog.find_format(fmt).bits, 16)  # type: ignore[union-attr]
        gathered = 2 * layer_params * gather_bits / 8
        acc.add(
            "gathered_layers",
            gathered,
            f"ZeRO-3/FSDP all-gather: ~2 layers at {gather_bits:g} bits",
        )
        w_b += int(gathered)
    elif fmt == "fp32" and compute != "fp32" and not offload_params:
        w_b += acc.add(
            "compute_copy",
            params * 2 / split,
            f"{model.params_b:g}B x 2 B autocast 16-bit copy of fp32 weights",
        )

    # Gradients and optimizer state.
    if offload_opt:
        g_b = acc.add(
            "gradients",
            min(trainable, 5e8) * param_bytes / shard_grads,
            "ZeRO-Offload: gradient buckets only (states on CPU)",
        )
        o_b = 0
        step_temp = 0.0
    else:
        grads = trainable * param_bytes / shard_grads
        if w.optimizer_in_backward:
            grads = min(grads, arch.vocab * arch.hidden * param_bytes)
        g_b = acc.add(
            "gradients",
            grads,
            f"{trainable / 1e6:.1f}M trainable x {param_bytes} B"
            + (f" / {shard_grads}" if shard_grads > 1 else ""),
        )
        # With fp32 master weights the moments are fp32 too (DeepSpeed / Megatron mixed precision).
        per = optimizer_state_bytes_per_param(opt, 4 if master else param_bytes, master)
        o_b = acc.add(
            "optimizer",
            trainable * per / shard_states,
            f"{trainable / 1e6:.1f}M x {per:g} B ({opt.value}{' + fp32 master' if master else ''})"
            + (f" / {shard_states}" if shard_states > 1 else ""),
        )
        # torch's foreach AdamW/Lion step allocates one more state-sized buffer; the fused
        # kernels do not, and torchtune's recipe configs ask for `fused: True`.
        foreach = opt in (Optimizer.adamw, Optimizer.lion, Optimizer.sgd_momentum) and (
            (w.framework or "").lower() not in FUSED_OPTIMIZER_FRAMEWORKS
        )
        step_temp = (
            trainable * param_bytes / shard_states
            if foreach and not w.optimizer_in_backward
            else 0.0
        )
    if par == Parallelism.ddp:
        g_b += acc.add(
            "ddp_buckets",
            trainable * param_bytes,
            "DDP gradient buckets (a second copy of the gradients)",
        )

    # Activations.
    tokens = batch * seq
    tp = n if par == Parallelism.tp else 1
    seq_eff = seq + (200 if w.mode == Mode.prompt_tuning else 0)
    per_layer_tok = activation_bytes_per_token_layer(arch, seq_eff, attention, elem, dropout) / tp
    if w.mode in (Mode.lora, Mode.dora, Mode.qlora) and framework in PEFT_FRAMEWORKS:
        dims = _lora_target_dims(arch, w.lora_targets)
        per_layer_tok += sum(4 * i for i, _ in dims)  # PEFT casts each adapter input to fp32
    one_layer = per_layer_tok * batch * seq_eff
    if gc:
        ckpt = (
            0.0
            if w.activation_offload
            else 2 * arch.hidden * (elem / 2) * tokens * arch.layers / tp
        )
        saved = ckpt + one_layer
        formula = (
            f"checkpointed: {arch.layers} layer inputs x {tokens} tokens + one layer recomputed"
        )
    else:
        saved = one_layer * arch.layers
        formula = f"{arch.layers} layers x {tokens} tokens x {per_layer_tok / 1024:.0f} KiB (Korthikanti 2022, {attention.value})"
    if w.mode == Mode.dora:
        saved += sum(i * o for i, o in _lora_target_dims(arch, w.lora_targets)) * 4 * arch.layers
        formula += " + DoRA weight-norm products"
    a_b = acc.add("activations", saved, formula)
    has_lm = not (spec is not None and spec.family in ENCODER_FAMILIES)
    logits_b = 0
    if has_lm:
        # 16-bit logits + fp32 copy + log-softmax + its gradient at the start of backward;
        # a chunked loss keeps the 16-bit logits and one fp32 chunk at a time.
        per = 2.5 if w.chunked_loss else (12.0 if elem <= 2.5 else 16.0)
        logits_b = acc.add(
            "logits",
            tokens * arch.vocab * per / tp,
            f"{tokens} tokens x {arch.vocab} vocab x {per:g} B ({'chunked' if w.chunked_loss else '16-bit + fp32 loss'})",
        )
    transient = one_layer / 2  # backward of one layer: gradients of its activations

    grads_live = g_b if (ga > 1 or par == Parallelism.ddp) else 0
    # The loss's buffers are freed by its own backward before the first layer's backward
    # starts: a layer's transient never coexists with the logits.
    forward_peak = grads_live + a_b + max(logits_b, transient)
    step_peak = g_b + step_temp
    backward_peak = g_b + transient + (ckpt if gc and not w.activation_offload else 0) * 0.5
    peak_extra = max(forward_peak, step_peak, backward_peak)
    if peak_extra == step_peak and step_temp > 0:
        acc.add("optimizer_step", step_temp, "foreach optimizer step: one more state-sized buffer")
    elif peak_extra == forward_peak and transient > logits_b:
        acc.add(
            "backward_transient", transient, "gradients of one layer's activations during backward"
        )
    allocated = w_b + o_b + int(peak_extra)
    # Breakdown terms must add up to the allocated total shown.
    listed = sum(t.bytes for t in acc.terms)
    if listed != allocated:
        _rebalance(acc, allocated)
    return _finish(acc, allocated, w, True, _band(model, spec, True))


def _rebalance(acc: _Acc, allocated: int) -> None:
    """Terms that are not alive at the same time (gradients vs activations) are listed in
    full; scale the non-resident ones so the breakdown sums to the peak."""
    resident = {"weights", "gathered_layers", "compute_copy", "optimizer"}
    fixed = sum(t.bytes for t in acc.terms if t.name in resident)
    rest = [t for t in acc.terms if t.name not in resident]
    total_rest = sum(t.bytes for t in rest)
    target = max(allocated - fixed, 0)
    if total_rest <= 0:
        return
    factor = target / total_rest
    for t in rest:
        t.bytes = int(t.bytes * factor)
    drift = allocated - sum(t.bytes for t in acc.terms)
    if rest:
        rest[-1].bytes += drift


# --------------------------------------------------------------------------------------
# Diffusion pipelines
# --------------------------------------------------------------------------------------


def _estimate_diffusion(w: Workload, spec: ModelSpec, acc: _Acc) -> Estimate:
    d = spec.diffusion
    assert d is not None
    fmt = _default_format(w, spec, acc)
    compute_bytes = 4 if fmt == "fp32" else 2
    te_fmt = w.text_encoder_format or fmt
    width = w.image_width or d.default_resolution
    height = w.image_height or d.default_resolution
    if w.image_width is None:
        acc.assume("resolution", f"{width}x{height}")
    images = (w.images_per_prompt or 1) * (w.batch_size or 1)
    if w.images_per_prompt is None and w.batch_size is None:
        acc.assume("images", 1)
    attention = w.attention or Attention.sdpa

    den_w = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, fmt)
    te_w = [estimate_weight_bytes(p * 1e9, None, te_fmt) for p in d.text_encoders_params_b]
    vae_bytes = 4 if (d.vae_force_upcast or fmt == "fp32") else 2
    vae_w = d.vae_params_b * 1e9 * vae_bytes

    if w.mode.is_training:
        return _estimate_diffusion_training(w, spec, acc, fmt, den_w, width, height)

    cfg = w.guidance if w.guidance is not None else d.guidance
    batch_eff = images * (2 if cfg else 1)
    latent_tokens = (width // 8) * (height // 8)
    attn_tokens = latent_tokens / d.attn_tokens_divisor
    # The per-token working set is taken as measured at 16-bit; fp32 pipelines are rare
    # and their peak is the VAE decode, which does scale with the dtype below.
    den_act = (
        batch_eff
        * (attn_tokens + (d.text_tokens if d.denoiser == "dit" else 0))
        * d.denoiser_act_bytes_per_token
    )
    # diffusers AttnProcessor: baddbmm input buffer, scores and probs are all score-sized.
    scores = batch_eff * d.attn_heads * attn_tokens**2 * compute_bytes * 3
    if attention == Attention.eager:
        den_act += scores
    elif attention == Attention.sliced:
        den_act += scores / 2  # diffusers "auto" slicing: half the heads at a time
    decode_images = 1 if w.vae_slicing else images
    channels = 64 if w.tiny_vae else 128
    tensors = 3 if w.tiny_vae else d.vae_decode_tensors
    dec_bytes = 2 if w.tiny_vae else vae_bytes
    decode = decode_images * width * height * channels * dec_bytes * tensors
    if w.tiny_vae:
        vae_w = 2.4e6 * 2

    offload = w.cpu_offload
    te_total = sum(te_w) if w.text_encoders_on_gpu else 0
    if offload == Offload.sequential:
        resident = max(den_w / 50, vae_w)  # one submodule at a time
        allocated = acc.add(
            "weights", resident, "sequential CPU offload: one submodule on the GPU at a time"
        )
        peak = max(den_act, decode)
        allocated += acc.add("activations", peak, "max(denoiser pass, VAE decode)")
    elif offload == Offload.model:
        denoise_phase = den_w + den_act
        decode_phase = vae_w + decode
        text_phase = max(te_w) if te_w and w.text_encoders_on_gpu else 0
        if decode_phase >= denoise_phase:
            allocated = acc.add(
                "weights", vae_w, "model CPU offload: only the VAE is resident while decoding"
            )
            allocated += acc.add(
                "vae_decode",
                decode,
                f"{decode_images} x {width}x{height} x {channels} ch x {dec_bytes} B x {tensors} maps",
            )
        else:
            allocated = acc.add(
                "weights", den_w, "model CPU offload: only the denoiser is resident while denoising"
            )
            allocated += acc.add("activations", den_act, f"denoiser at batch {batch_eff}")
        allocated = max(allocated, int(text_phase))
    else:
        allocated = acc.add(
            "weights",
            den_w,
            f"{d.denoiser} {d.denoiser_params_b:g}B x {catalog.find_format(fmt).bits:g} bits",
        )  # type: ignore[union-attr]
        if te_total:
            allocated += acc.add(
                "text_encoders",
                te_total,
                f"{' + '.join(f'{p:g}B' for p in d.text_encoders_params_b)} x {catalog.find_format(te_fmt).bits:g} bits",
            )  # type: ignore[union-attr]
        allocated += acc.add(
            "vae",
            vae_w,
            f"VAE {d.vae_params_b:g}B x {vae_bytes} B"
            + (" (fp32 upcast)" if vae_bytes == 4 else ""),
        )
        if decode >= den_act:
            allocated += acc.add(
                "vae_decode",
                decode,
                f"{decode_images} image(s) x {width}x{height} x {channels} ch x {dec_bytes} B x {tensors} maps alive",
            )
        else:
            allocated += acc.add(
                "activations",
                den_act,
                f"denoiser at batch {batch_eff} ({images} images{' x 2 for CFG' if cfg else ''}), {int(attn_tokens)} attention tokens",
            )
    return _finish(acc, allocated, w, False, (0.15, 0.25))


def generic_diffusion_spec(params_b: float) -> ModelSpec:
    """A diffusion model known only by its size: a FLUX-like DiT holding every parameter,
    16 latent channels, text embeddings computed elsewhere."""
    from advisor.catalog import DiffusionSpec

    return ModelSpec(
        id="generic-dit",
        name=f"{params_b:g}B diffusion transformer",
        kind=Kind.diffusion,
        family="dit",
        params_b=params_b,
        source="assumed (no catalog entry)",
        diffusion=DiffusionSpec(
            denoiser="dit",
            denoiser_params_b=params_b,
            text_encoders_params_b=[],
            vae_params_b=0.084,
            latent_channels=16,
            default_resolution=1024,
            guidance=False,
            text_tokens=512,
            attn_tokens_divisor=4,
            attn_heads=max(int((params_b / 12) ** 0.5 * 24), 8),
            denoiser_act_bytes_per_token=148000,
            vae_force_upcast=False,
            vae_decode_tensors=9,
        ),
    )


def _estimate_diffusion_training(
    w: Workload, spec: ModelSpec, acc: _Acc, fmt: str, den_w: float, width: int, height: int
) -> Estimate:
    """Only the denoiser trains; prompt embeddings and VAE latents are precomputed in the
    diffusers training scripts (their --cache_latents / precompute paths)."""
    d = spec.diffusion
    assert d is not None
    batch = w.batch_size or 1
    opt = w.optimizer or Optimizer.adamw
    if w.optimizer is None:
        acc.assume("optimizer", "adamw")
    gc = w.gradient_checkpointing if w.gradient_checkpointing is not None else True
    full = w.mode in (Mode.full, Mode.pretrain)
    params = d.denoiser_params_b * 1e9
    param_bytes = 4 if fmt == "fp32" else 2
    hidden = d.attn_heads * (128 if d.denoiser == "dit" else 64)
    if full:
        trainable = params
    else:
        rank = w.lora_rank or 16
        n_targets = max(len((w.lora_targets or "to_q,to_k,to_v,to_out").split(",")), 1)
        layers = max(int(params / (12 * hidden * hidden)), 1)
        trainable = rank * 2 * hidden * n_targets * layers
        param_bytes = 4
    allocated = acc.add(
        "weights",
        den_w,
        f"{d.denoiser} {d.denoiser_params_b:g}B x {catalog.find_format(fmt).bits:g} bits",
    )  # type: ignore[union-attr]
    grads = acc.add(
        "gradients", trainable * param_bytes, f"{trainable / 1e6:.1f}M trainable x {param_bytes} B"
    )
    per = optimizer_state_bytes_per_param(
        opt, param_bytes, bool(w.mixed_precision) and full and param_bytes == 2
    )
    allocated += acc.add(
        "optimizer", trainable * per, f"{trainable / 1e6:.1f}M x {per:g} B ({opt.value})"
    )
    tokens = (width // 8) * (height // 8) / d.attn_tokens_divisor + (
        d.text_tokens if d.denoiser == "dit" else 0
    )
    per_token_layer = 40 * hidden  # Korthikanti-style saved tensors per block, 16-bit
    layers = max(int(params / (12 * hidden * hidden)), 1)
    if gc:
        act = batch * tokens * (2 * hidden * layers + per_token_layer)
    else:
        act = batch * tokens * per_token_layer * layers
    act_b = acc.add(
        "activations", act, f"batch {batch} x {int(tokens)} tokens{' (checkpointed)' if gc else ''}"
    )
    foreach = opt in (Optimizer.adamw, Optimizer.lion) and full
    step = trainable * param_bytes if foreach else 0
    allocated += max(grads + act_b, grads + step)
    listed = sum(t.bytes for t in acc.terms)
    if listed != allocated:
        _rebalance(acc, allocated)
    return _finish(acc, allocated, w, True, (0.2, 0.3))


# --------------------------------------------------------------------------------------
# Classic CNN / RNN course work
# --------------------------------------------------------------------------------------


def _estimate_classic_cnn(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: _Acc
) -> Estimate:
    params = model.params_b * 1e9
    fmt = _default_format(w, spec, acc) if w.weights_format else "fp32"
    amp = w.mixed_precision or (w.compute_dtype in ("fp16", "bf16"))
    batch = w.batch_size or 32
    if w.batch_size is None:
        acc.assume("batch_size", 32)
    ref = (spec.reference_input if spec else None) or 224
    size = w.image_width or ref
    per_sample = (
        spec.activation_bytes_per_sample if spec and spec.activation_bytes_per_sample else 50e6
    )
    per_sample *= (size / ref) ** 2 * (0.55 if amp else 1.0)
    allocated = acc.add(
        "weights", params * catalog.find_format(fmt).bits / 8, f"{params / 1e6:.1f}M params x {fmt}"
    )  # type: ignore[union-attr]
    if w.mode.is_training:
        opt = w.optimizer or Optimizer.adamw
        if w.optimizer is None:
            acc.assume("optimizer", "adamw")
        allocated += acc.add("gradients", params * 4, "fp32 gradients")
        allocated += acc.add(
            "optimizer", params * optimizer_state_bytes_per_param(opt, 4, False), opt.value
        )
        allocated += acc.add(
            "activations",
            batch * per_sample,
            f"batch {batch} x {per_sample / 1e6:.0f} MB/sample at {size}px",
        )
    else:
        allocated += acc.add(
            "activations", batch * per_sample / 4, f"inference: batch {batch}, no saved activations"
        )
    return _finish(acc, allocated, w, w.mode.is_training, (0.3, 0.5))
