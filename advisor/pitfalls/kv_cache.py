"""What the KV cache brings: its size where it dominates (many sequences, or a long one, and
the smaller cache the runtime has), a serving engine's preallocated share, transformers'
extra passes over it, and what a quantized cache needs of llama.cpp and Ollama."""

from __future__ import annotations

from advisor.constraints import kv_cache_type
from advisor.memory.runtimes import LLAMACPP_FAMILY, coefficient, lmdeploy
from advisor.models.choices import Attention, Kind, Runtime
from advisor.models.result import EstimateResult
from advisor.pitfalls.pitfall import GIB, gib_text, pitfall
from advisor.types import Pitfall, pitfall_texts


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


def kv_size_notes(result: EstimateResult) -> list[Pitfall]:
    """The KV cache where it is over 30% of the total and over 2 GiB: a speech model's fixed
    decoder context (the batch is the lever), many short sequences, or a long one; with the
    smaller cache the runtime has (`kv_fix_texts`) and, on several cards, their total."""
    w, model, est = result.workload, result.model, result.estimate
    if est is None:
        return []
    arch = model.arch
    kv = est.breakdown.get("kv_cache", 0)
    if not (kv > 0.3 * est.allocated_bytes and kv > 2 * GIB):
        return []
    batch = w.concurrency or w.batch_size or 1
    context = w.context_tokens or w.seq_len or 4096
    kv_fix = kv_fix_texts(result)
    # the breakdown is per card: on several, the total beside it (the cards' share)
    cards = w.num_gpus if est.per_gpu else 1
    extra = {"n": str(cards), "total": gib_text(kv * cards)} if cards > 1 else {}
    suffix = "_cards" if cards > 1 else ""
    if fixed_context(result):  # Whisper's decoder: 448 tokens, the batch is the lever
        return [
            pitfall(
                "batch_kv_fixed_context",
                kv=gib_text(kv),
                batch=batch,
                model=model.name,
                ctx=arch.max_context_tokens if arch is not None else context,
            )
        ]
    if batch > 1 and context < 8192:  # many sequences, not a long one
        return [pitfall("batch_kv" + suffix, kv_fix, kv=gib_text(kv), batch=batch, **extra)]
    return [pitfall("long_context_kv" + suffix, kv_fix, kv=gib_text(kv), **extra)]


def serving_notes(result: EstimateResult) -> list[Pitfall]:
    """A serving engine's preallocated share of the card, and transformers' generate()
    growing its cache as it decodes."""
    w, est = result.workload, result.estimate
    if est is None:
        return []
    out: list[Pitfall] = []
    framework = w.runtime.value if w.runtime else (w.framework or "").lower()
    engine = est.runtime.value if est.runtime in (Runtime.vllm, Runtime.sglang) else None
    if framework == "vllm" or engine is not None:
        # whenever the figure is a serving engine's, assumed or asked: the answer's
        # nvidia-smi view is then the engine's share of the card, and this says why
        engine = engine or "vllm"
        util = w.gpu_memory_utilization or coefficient(engine, "gpu_memory_utilization")
        name = {"vllm": "vLLM", "sglang": "SGLang"}[engine]
        out.append(pitfall("vllm_preallocates", engine=name, share=f"{util * 100:.0f}%", util=util))
    if est.runtime == Runtime.lmdeploy and not w.mode.is_training:
        ratio = lmdeploy.cache_share(w)
        out.append(pitfall("lmdeploy_preallocates", share=f"{ratio * 100:.0f}%", ratio=ratio))
    if framework in ("transformers", "hf") and not w.mode.is_training:
        out.append(pitfall("hf_generate_kv"))
    return out


def kv_cache_notes(result: EstimateResult) -> list[Pitfall]:
    """What a quantized KV cache needs of llama.cpp and Ollama: flash attention for the V
    half, and on CUDA the kernels its default build carries (data/pitfalls.toml)."""
    kv, est = kv_cache_type(result), result.estimate
    runtime = est.runtime if est is not None else None
    if kv is None or not kv.startswith(("q", "iq")) or runtime not in LLAMACPP_FAMILY:
        return []
    if runtime == Runtime.ollama:
        return [pitfall("ollama_kv_needs_flash_attention", kv=kv)]
    if result.workload.attention == Attention.eager:  # -fa off
        return [pitfall("llamacpp_kv_flash_attention_off")]
    return [pitfall("llamacpp_kv_needs_flash_attention")]


def fixed_context(result: EstimateResult) -> bool:
    """A speech model (data/vocab/runtimes.toml speech_families): its decoder's context is
    fixed by the model, so a shorter context is no advice."""
    from advisor import catalog
    from advisor.parse import vocab

    spec = catalog.models().get(result.model.id or "")
    return spec is not None and spec.family in vocab.load("runtimes")["speech_families"]


def kv_copies_speed(result: EstimateResult) -> list[Pitfall]:
    """Where transformers' extra passes over the KV cache (speed.transformers_kv_copies) are
    over half of what a decode step reads for the weights: said beside the speed, sourced."""
    from advisor.recommend.speed import transformers_kv_copies

    est, arch = result.estimate, result.model.arch
    copies = transformers_kv_copies(result)
    if est is None or not copies or fixed_context(result):
        return []  # a speech model's speed is a real-time factor, not tokens per second
    extra = est.breakdown.get("kv_cache", 0) * copies
    if extra < 0.5 * est.breakdown.get("weights", 0):
        return []
    groups = arch.heads // arch.kv_heads_ if arch is not None else 1
    texts = pitfall_texts()["hf_generate_kv_speed"]["expand"]
    expand = {k: v.format(groups=groups) for k, v in texts.items()} if copies > 2 else {}
    return [
        pitfall(
            "hf_generate_kv_speed",
            {"expand": expand or {"zh": "", "en": ""}},
            extra=gib_text(extra),
        )
    ]
