"""Transformer workloads: inference through a runtime, or training through a recipe."""

from __future__ import annotations

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory import encoder, multimodal, tts
from advisor.memory.band import band
from advisor.memory.kv_types import runtime_kv_dtype
from advisor.memory.quantizers import (
    FLOAT_FORMATS,
    kept_bytes_per_weight,
    kept_fp32_extra_bytes,
    lm_head_quantized_bytes,
    load_dtype,
    skipped_encoder_params,
)
from advisor.memory.resolve import default_format
from advisor.memory.runtimes import (
    LLAMACPP_FAMILY,
    SERVING_ENGINES,
    InferenceSetup,
    add_weights,
    autoawq,
    exllama,
    from_scratch,
    llamacpp,
    lmdeploy,
    pick_runtime,
    transformers,
    vllm,
    whisper,
)
from advisor.memory.terms import Breakdown, finish, load_peak
from advisor.memory.training import estimate_training
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Mode, Parallelism, Runtime
from advisor.models.estimate import Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

# Splits that put a share of the weights on each card (layers for PP and llama.cpp's layer
# split, columns for TP, shards for ZeRO-3/FSDP).
SPLIT_WEIGHTS = (
    Parallelism.tp,
    Parallelism.pp,
    Parallelism.layer,
    Parallelism.zero3,
    Parallelism.fsdp,
)


def estimate_transformer(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: Breakdown
) -> Estimate:
    """A transformer's format, how several cards split it (`_parallelism`), its attention
    kernel (`_attention`) and its weights as loaded (`_weight_bytes`); then inference
    through a runtime or training through a recipe."""
    arch = model.arch
    assert arch is not None
    params = model.params_b * 1e9
    fmt = default_format(w, spec, acc)
    if w.weights_format is None and not w.mode.is_training:
        fmt = whisper.reference_format(w.framework, fmt, acc)
    # the runtime inference follows (asked up to three times below: once)
    picked = None if w.mode.is_training else pick_runtime(w, model.kind, fmt)
    par = _parallelism(w, picked, acc)
    framework = w.framework.lower() if w.framework else None
    attention = _attention(w, spec, picked, framework, acc)
    if fmt == "nf4" and framework == "torchtune":
        fmt = "nf4-dq"  # torchao's NF4 (torchtune QLoRA) double-quantizes its scalers
    # Inference: the modules a quantizer leaves alone stay in the load dtype (torch_dtype),
    # fp32 when the question names it (data/quantizers.toml [load_dtype]). Training recipes
    # set their own dtypes (training.py).
    load = "bf16" if w.mode.is_training else load_dtype(fmt, w.load_dtype)
    weight_bytes, weight_formula = _weight_bytes(w, model, spec, arch, fmt, load, acc)
    # Tensor and pipeline parallel split the weights; ZeRO-3/FSDP shard them.
    split = w.num_gpus if par in SPLIT_WEIGHTS else 1
    if w.mode.is_training:
        return estimate_training(
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

    return estimate_inference(
        w,
        model,
        spec,
        acc,
        arch,
        fmt,
        weight_bytes,
        weight_formula,
        par,
        split,
        attention,
        picked,
        load,
    )


def _parallelism(w: Workload, picked: tuple[Runtime, bool] | None, acc: Breakdown) -> Parallelism:
    """How several cards split the model when the question does not say: tensor parallel
    for inference (llama.cpp's layer split under its family), ZeRO-3 for training; said as
    assumed."""
    par = w.parallelism or (Parallelism.none if w.num_gpus == 1 else None)
    if par is None:
        par = Parallelism.tp if not w.mode.is_training else Parallelism.zero3
        if picked is not None and w.mode != Mode.load_only:
            runtime = picked[0]
            if runtime in LLAMACPP_FAMILY:
                # llama.cpp's default --split-mode layer (Ollama and LM Studio do the same):
                # whole layers, with their KV, on each card; not tensor parallel.
                par = Parallelism.layer
        acc.assume("parallelism", par.value)
    return par


def _attention(
    w: Workload,
    spec: ModelSpec | None,
    picked: tuple[Runtime, bool] | None,
    framework: str | None,
    acc: Breakdown,
) -> Attention:
    """The attention kernel asked, else the one the code runs (eager where it computes the
    scores by hand), said as assumed in the runtime's own words."""
    attention = w.attention or Attention.sdpa
    if w.attention is None and picked is not None and transformers.eager_by_default(w, picked[0]):
        # transformers before 4.36 had no SDPA path: its attention materialised the scores
        attention = Attention.eager
        acc.assume("attention", "eager_before_sdpa")
    elif w.attention is None and from_scratch.handles(framework):
        # LLMs-from-scratch computes its attention by hand (runtimes/from_scratch.py)
        attention = Attention.eager
        acc.assume("attention", "from_scratch_eager")
    elif encoder.eager_by_default(w, spec):
        # segment-anything's and DINOv2's own code compute attention by hand (encoder.py)
        attention = Attention.eager
        acc.assume("attention", encoder.reference_eager_label(w, spec))
    elif w.attention is None:
        # Under llama.cpp (Ollama, LM Studio) "sdpa" is its flash-attention path (no n_ctx x
        # n_ubatch score matrix, runtimes/llamacpp.py); the answer names that, not PyTorch's.
        gguf = picked is not None and picked[0] in LLAMACPP_FAMILY
        # vLLM / SGLang / TGI pick their own attention backend (FlashAttention, FlashInfer,
        # Triton, ROCm's), never PyTorch SDPA: the memory is the same (no score matrix).
        serving = picked is not None and picked[0] in SERVING_ENGINES
        # LMDeploy's TurboMind runs its own fused attention kernels likewise.
        turbomind = picked is not None and picked[0] == Runtime.lmdeploy
        own = "engine_backend" if serving else "turbomind_kernels" if turbomind else "sdpa"
        acc.assume("attention", "llamacpp_flash" if gguf else own)
    return attention


def _weight_bytes(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    arch: Architecture,
    fmt: str,
    load: str,
    acc: Breakdown,
) -> tuple[int, str]:
    """The weights as loaded: the format's bytes with the modules a quantizer keeps in the
    load dtype, a T5's `wo` in fp32, and an untied lm_head quantized or not. (bytes, the
    formula shown)."""
    params = model.params_b * 1e9
    weight_bytes = estimate_weight_bytes(params, arch, fmt, kept_bytes_per_weight(load))
    # bitsandbytes leaves a T5's `wo` in fp32 (transformers _keep_in_fp32_modules); torchao
    # and quanto's from_pretrained quantizers leave it unquantized in 16-bit.
    weight_bytes += int(
        kept_fp32_extra_bytes(spec.family if spec else None, arch, fmt, w.quantize_after_load)
    )
    skipped = skipped_encoder_params(fmt, (w.framework or "").lower() or None, arch)
    if skipped:
        # Unsloth keeps the vision / audio encoders' Linears 16-bit (quantizers.toml)
        bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
        weight_bytes += int(skipped * (kept_bytes_per_weight(load) - bits / 8))
        acc.assume("quant_skipped", "unsloth_encoders")
    if not w.mode.is_training and not arch.tied_embeddings:
        weight_bytes -= lm_head_quantized_bytes(arch, params, fmt, load, w.quantize_after_load, acc)
    # a lean breakdown keeps no text (terms.Breakdown): its formulas are not written
    weight_formula = (
        ""
        if acc.lean
        else f"{model.params_b:g}B params x {catalog.find_format(fmt).bits:g} bits ({fmt})"  # type: ignore[union-attr]
    )
    return weight_bytes, weight_formula


def estimate_inference(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    acc: Breakdown,
    arch: Architecture,
    fmt: str,
    weight_bytes: int,
    weight_formula: str,
    par: Parallelism,
    split: int,
    attention: Attention,
    picked: tuple[Runtime, bool] | None = None,
    load: str = "bf16",
) -> Estimate:
    """`picked`: `pick_runtime(w, model.kind, fmt)` when the caller has it; `load`: the
    dtype the model is loaded in (quantizers.load_dtype). The run's lengths
    (`_prompt_and_context`), its KV cache's dtype (`_default_kv_dtype`, `_kv_dtype_asked`),
    what its runtime allocates (`_allocate`) and the reserve and band on top
    (`_finish_inference`) are each their own step."""
    if encoder.is_vision_encoder(spec) and w.mode != Mode.load_only:
        # An image encoder has no KV cache and no vocabulary logits (encoder.py).
        return encoder.estimate_encoder(
            w, model, spec, acc, arch, fmt, weight_bytes, weight_formula, split
        )
    runtime, assumed = picked or pick_runtime(w, model.kind, fmt)
    if assumed:
        acc.assume("runtime", runtime.value)
        if program := tts.program(model.id):
            acc.assume("tts_program", program)  # said in place of the runtime
    batch = w.batch_size or 1
    if w.batch_size is None and w.concurrency is None:
        acc.assume("batch_size", 1)
    prompt, context = _prompt_and_context(w, model, arch, acc)
    kv_dtype = _default_kv_dtype(w, runtime, fmt, load)
    if fmt not in FLOAT_FORMATS and load == "fp32":
        # quantized weights loaded in float32: what stays unquantized is fp32 (quantizers.toml)
        acc.assume("load_dtype", load)
    if w.mode != Mode.load_only and not tts.non_autoregressive(model.id):
        kv_dtype = _kv_dtype_asked(w, runtime, kv_dtype, acc)
    setup = InferenceSetup(
        w=w,
        model=model,
        spec=spec,
        arch=arch,
        runtime=runtime,
        fmt=fmt,
        weight_bytes=weight_bytes,
        weight_formula=weight_formula,
        split=split,
        tp=w.num_gpus if par == Parallelism.tp else 1,
        batch=batch,
        prompt=prompt,
        context=context,
        kv_dtype=kv_dtype,
        attention=attention,
        framework=w.framework.lower() if w.framework else None,
        weight_bits=catalog.find_format(fmt).bits,  # type: ignore[union-attr]
        load_dtype=load,
        encoder_tokens=min(multimodal.encoder_frames(model.id), max(prompt - 1, 0)),
    )
    return _finish_inference(setup, acc, _allocate(setup, acc), par)


def _prompt_and_context(
    w: Workload, model: ResolvedModel, arch: Architecture, acc: Breakdown
) -> tuple[int, int]:
    """The prompt and the whole context in tokens: as asked (a context, or a prompt and its
    new tokens), else 4096 (or the model's window; a TTS model's speech tokens for
    the assumed length of speech) said as assumed; images (VLM) and audio
    frames (Whisper) are prompt tokens to the decoder on top."""
    if w.context_tokens:
        prompt = w.prompt_tokens or max(w.context_tokens - (w.new_tokens or 0), 1)
        context = w.context_tokens
    elif w.prompt_tokens is not None or w.new_tokens is not None:
        prompt = w.prompt_tokens or 1
        context = prompt + (w.new_tokens or 0)
    else:
        # a TTS model: the speech tokens of the assumed length of speech
        speech = tts.speech_tokens(model.id, acc)
        context = min(speech or 4096, arch.max_context_tokens)
        prompt = context
        acc.assume("context_tokens", context)
    # Images (VLM) and audio frames (Whisper) are prompt tokens to the decoder.
    media = multimodal.extra_prompt_tokens(model.id, w, acc)
    return prompt + media, context + media


def _default_kv_dtype(w: Workload, runtime: Runtime, fmt: str, load: str) -> str:
    """The KV cache's dtype when none is asked, as each runtime picks it."""
    kv_dtype = w.kv_cache_dtype or ("fp16" if fmt in ("fp16", "fp32") else "bf16")
    if runtime in LLAMACPP_FAMILY and w.kv_cache_dtype is None:
        kv_dtype = "fp16"  # llama.cpp's -ctk/-ctv default f16
    elif runtime == Runtime.exllamav2 and w.kv_cache_dtype is None:
        kv_dtype = "fp16"  # ExLlamaV2Cache and ExLlama v1's ExLlamaCache: torch.float16
    elif runtime == Runtime.transformers and w.kv_cache_dtype is None and load != "bf16":
        # transformers' caches take the key/value states' dtype: the model's (DynamicCache),
        # fp16 under bitsandbytes unless told, fp32 for a model loaded in fp32
        kv_dtype = load
    return kv_dtype


def _kv_dtype_asked(w: Workload, runtime: Runtime, kv_dtype: str, acc: Breakdown) -> str:
    """The default said as assumed; an asked dtype as the runtime takes it (the nearest it
    offers, Ollama's f16 without flash attention), said where it differs."""
    if w.kv_cache_dtype is None:
        acc.assume("kv_cache_dtype", kv_dtype)
        return kv_dtype
    kv_dtype, how = runtime_kv_dtype(runtime.value, kv_dtype)
    if runtime == Runtime.ollama and w.attention == Attention.eager and kv_dtype != "fp16":
        # OLLAMA_FLASH_ATTENTION=0: Ollama ignores OLLAMA_KV_CACHE_TYPE and keeps f16
        acc.assume("kv_cache_without_flash_attention", f"{w.kv_cache_dtype} → fp16")
        kv_dtype, how = "fp16", None
    if how is not None:  # e.g. int8 asked under vLLM, which offers fp8 only
        acc.assume("kv_cache_dtype_unsupported", f"{w.kv_cache_dtype} → {kv_dtype} ({how})")
    return kv_dtype


def _allocate(setup: InferenceSetup, acc: Breakdown) -> int:
    """What the runtime allocates, in its own terms (one module per runtime), with the
    reference Whisper's load and a load-then-quantize peak on top."""
    w, runtime = setup.w, setup.runtime
    if w.mode == Mode.load_only:
        allocated = add_weights(setup, acc)
    elif tts.non_autoregressive(setup.model.id):
        return tts.allocate_flow(setup, acc)  # a flow-matching DiT: no KV cache
    elif runtime in SERVING_ENGINES:
        allocated = vllm.allocate(setup, acc)
    elif runtime in LLAMACPP_FAMILY:
        allocated = llamacpp.allocate(setup, acc)
    elif runtime == Runtime.exllamav2:
        allocated = exllama.allocate(setup, acc)
    elif runtime == Runtime.lmdeploy:
        allocated = lmdeploy.allocate(setup, acc)
    elif setup.framework in autoawq.FRAMEWORKS:
        allocated = autoawq.allocate(setup, acc)
    else:
        allocated = transformers.allocate(setup, acc)
    if runtime == Runtime.transformers and setup.arch.causal_mask_buffer:
        allocated += _add_mask_buffers(setup, acc)
    if whisper.is_reference_whisper(setup.framework):
        allocated = whisper.load(setup, acc, allocated)
    if w.quantize_after_load and setup.weight_bits < 16:
        allocated = load_peak(acc, allocated, setup.model.params_b * 1e9 * 2 / setup.split)
    return allocated


def _add_mask_buffers(setup: InferenceSetup, acc: Breakdown) -> int:
    """GPT-2's attention keeps its causal mask as a buffer: a bool n_positions x n_positions
    matrix per layer, on the GPU with the weights (data/runtimes.toml [transformers]
    causal_mask_buffer_source)."""
    arch = setup.arch
    positions = arch.max_context_tokens
    layers = arch.layers // setup.split
    return acc.add(
        "mask_buffers",
        layers * positions * positions,
        f"{layers} layers x {positions} x {positions} bool causal mask",
        key="mask_buffers",
        layers=layers,
        positions=positions,
    )


def _finish_inference(
    setup: InferenceSetup, acc: Breakdown, allocated: int, par: Parallelism
) -> Estimate:
    """The total: transformers' stacked-cache reserve, the collectives' buffers off a
    serving engine, llama.cpp's own context, the band; and the KV bytes a token."""
    w, runtime, model, spec = setup.w, setup.runtime, setup.model, setup.spec
    reserve = 0
    flow = tts.non_autoregressive(model.id)
    if (
        runtime == Runtime.transformers
        and not flow
        and w.mode != Mode.load_only
        and setup.framework not in autoawq.FRAMEWORKS
    ):
        reserve = transformers.stacked_cache_reserve(setup)
    est = finish(
        acc,
        allocated,
        w,
        False,
        band(model, spec, False, w.arch is not None),
        # vLLM/SGLang's measured non-torch term already holds their NCCL buffers.
        collectives=par != Parallelism.layer and runtime not in SERVING_ENGINES,
        reserve=reserve,
        own_context=llamacpp.context_bytes() if runtime in LLAMACPP_FAMILY else None,
    )
    est.runtime = runtime
    est.kv_bytes_per_token = 0 if flow else int(setup.kv_per_token)
    est.non_kv_bytes = est.total_bytes - sum(t.bytes for t in est.terms if t.name == "kv_cache")
    return est
