"""The physics of a decoder transformer: weights per format, KV cache per token, trainable
parameters per adapter method, activations per layer (Transformer Math 101 style)."""

from __future__ import annotations

import re
from functools import lru_cache

from advisor import catalog
from advisor.memory.gguf_mix import mixed_weight_bytes
from advisor.memory.kv_types import transformers_quantized_cache
from advisor.memory.resolve import UnknownFormatError
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Mode
from advisor.models.workload import Workload

# KV cache length a static-cache framework pre-allocates when not told otherwise.
STATIC_CACHE_FRAMEWORKS = {"torchtune", "gpt-fast", "tensorrt-llm", "trt-llm"}
# HF generate() concatenates the cache each step (tuple / DynamicCache torch.cat): the old
# and new copies coexist at the step's peak. Measured: optimum benchmark_gptq.py,
# Llama-2-13B fp16, 512+512 tokens, batch 1..16 (peak grows by 2 x KV).
CONCAT_CACHE_FRAMEWORKS = {"transformers", "hf", "huggingface", "optimum"}
# Frameworks whose default recipes use torch's fused AdamW (no foreach step buffer):
# torchtune recipes/configs (e.g. llama3_2/3B_full_single_device.yaml, optimizer fused: True).

ENCODER_FAMILIES = {"bert", "roberta", "vit", "dinov2"}  # classification heads, no LM logits


def embedding_params(arch: Architecture) -> int:
    """Input embedding plus lm_head (shared when tied): vocab x hidden each."""
    return arch.vocab * arch.hidden * (1 if arch.tied_embeddings else 2)


def estimate_weight_bytes(
    params: float, arch: Architecture | None, fmt: str, kept_bytes: float = 2.0
) -> int:
    """params x bits/8. Formats with scope "linear" (GPTQ, AWQ, bitsandbytes, fp8, quanto)
    leave embeddings and lm_head (and what is not a Linear: `Architecture.unquantized_params`)
    unquantized in the load dtype, `kept_bytes` per weight (2
    for a 16-bit load, 4 when loaded in float32: data/quantizers.toml [load_dtype]); scope
    "experts" (gpt-oss MXFP4) quantizes only the MoE experts' weights."""
    spec = catalog.find_format(fmt)
    if spec is None:
        raise UnknownFormatError(fmt)
    if spec.scope == "experts" and arch is not None and arch.experts and arch.moe_intermediate:
        experts = min(arch.layers * arch.experts * 3 * arch.hidden * arch.moe_intermediate, params)
        return int(experts * spec.bits / 8 + (params - experts) * kept_bytes)
    if spec.scope in ("linear", "experts") and arch is not None:
        emb = min(embedding_params(arch) + arch.unquantized_params, params)
        return int((params - emb) * spec.bits / 8 + emb * kept_bytes)
    mixed = mixed_weight_bytes(spec.id, params, arch)  # a GGUF K-quant preset's tensor types
    return mixed if mixed is not None else int(params * spec.bits / 8)


def kv_bytes_per_token(
    arch: Architecture, kv_dtype: str, context: int, framework: str | None
) -> float:
    """Per token: sum over the attention layers of 2 (K and V) x kv_heads x head_dim x bytes
    (a hybrid model's mamba, linear-attention and convolution layers keep a fixed state
    instead: `recurrent_state_bytes`); sliding-window layers hold at most `window` tokens.
    DeepSeek MLA: vLLM, SGLang and llama.cpp store the compressed latent (kv_lora_rank +
    rope dim) per layer; transformers' DeepseekV2/V3 attention caches the expanded keys
    (heads x (nope + rope)) and values (heads x v_head_dim) (modeling_deepseek_v3.py,
    past_key_values.update(key_states, value_states), 4.57; its docs, model_doc/
    deepseek_v3.md: "current implementation uses the 'naive' attention compution (so not
    really MLA)"). transformers' quantized cache (int8 / int4 / int2) holds every layer
    whole, its QuantizedLayer being a DynamicLayer whatever the window. Sources: llama.cpp llama-kv-cache.cpp (n_embd_k_gqa), vLLM
    kv_cache_interface.py page_size_bytes, DeepSeek-V2 paper §2.1."""
    b = catalog.kv_cache_bytes_per_element()[kv_dtype]
    layers = arch.kv_layers_
    if arch.kv_lora_rank and framework not in CONCAT_CACHE_FRAMEWORKS:
        return layers * (arch.kv_lora_rank + (arch.qk_rope_head_dim or 64)) * b
    per_layer = 2 * arch.kv_heads_ * arch.head_dim_ * b
    if arch.kv_lora_rank and arch.qk_nope_head_dim:
        k_dim = arch.qk_nope_head_dim + (arch.qk_rope_head_dim or 0)
        per_layer = arch.kv_heads_ * (k_dim + arch.head_dim_) * b
    # transformers' QuantizedCache keeps every layer full length, sliding or not
    # (data/kv_cache.toml [transformers] quantized_full_length)
    quantized = transformers_quantized_cache(kv_dtype) if framework == "transformers" else None
    whole = quantized is not None and bool(quantized["quantized_full_length"])
    window = arch.sliding_window
    if window and arch.sliding_layers_fraction > 0 and context > 0 and not whole:
        swa_layers = layers * arch.sliding_layers_fraction
        full_layers = layers - swa_layers
        window_share = min(window, context) / context
        return per_layer * (full_layers + swa_layers * window_share)
    return per_layer * layers


def recurrent_state_bytes(arch: Architecture, kv_dtype: str) -> float:
    """Per sequence: the fixed state of a hybrid model's non-attention layers (mamba conv
    and SSM state, linear-attention state, short-convolution cache), whatever the length.
    Kept in the model's 16-bit dtype: a quantized KV cache type (fp8, q8_0) applies to the
    attention layers only (vLLM keeps mamba_ssm_cache_dtype apart; transformers' hybrid
    caches allocate in the model dtype)."""
    b = max(catalog.kv_cache_bytes_per_element()[kv_dtype], 2.0)
    return arch.recurrent_state_elements * b


def mlp_width(arch: Architecture) -> int:
    """Width of the MLP a token passes through: the dense intermediate, or the routed
    experts' widths summed (top-k x expert width, plus shared experts)."""
    if arch.experts and arch.moe_intermediate:
        k = arch.experts_per_token or 2
        return arch.moe_intermediate * (k + arch.shared_experts)
    return arch.intermediate_


def lora_target_dims(arch: Architecture, targets: str | None) -> list[tuple[int, int]]:
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
    return [dims[key] for key in _target_keys((targets or "q_proj,v_proj").lower())]


# Which projection each spelling of a target list names (PEFT, diffusers and Meta names).
_TARGET_PATTERNS = {
    "q": re.compile(r"\bq(_proj)?\b|to_q"),
    "k": re.compile(r"\bk(_proj)?\b|to_k"),
    "v": re.compile(r"\bv(_proj)?\b|to_v"),
    "o": re.compile(r"o_proj|output_proj|to_out|out_proj"),
    "gate": re.compile(r"gate|w1"),
    "up": re.compile(r"up_proj|w3"),
    "down": re.compile(r"down|w2"),
}
_ALL_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


@lru_cache(maxsize=256)
def _target_keys(text: str) -> tuple[str, ...]:
    """The projections a lower-cased target list adapts, in `lora_target_dims`' order; read
    once per spelling (every LoRA estimate asks, with the same few lists)."""
    if "all" in text:
        return _ALL_TARGETS
    picked = [key for key, pattern in _TARGET_PATTERNS.items() if pattern.search(text)]
    if not picked and "linear" in text:
        # "the language model's linear layers", "attention and MLP linear layers": every
        # Linear with no projection named, as the trainers that say so adapt them (PEFT
        # target_modules="all-linear"; InternVL's wrap_llm_lora lists every projection of
        # the LLM; VideoLLaMA2's train.py find_all_linear_names)
        return _ALL_TARGETS
    if "mlp" in text and not any(k in text for k in ("gate", "w1", "up_proj", "down")):
        picked += ["gate", "up", "down"]
    return tuple(picked) or ("q", "v")


def trainable_params(w: Workload, arch: Architecture | None, params: float) -> float:
    """How many parameters receive gradients and optimizer state."""
    mode = w.mode
    if mode in (Mode.full, Mode.pretrain) or arch is None:
        return params if mode in (Mode.full, Mode.pretrain) else params * 0.01
    if mode in (Mode.lora, Mode.qlora, Mode.dora):
        rank = w.lora_rank or 8
        dims = lora_target_dims(arch, w.lora_targets)
        per_layer = sum(rank * (i + o) for i, o in dims)
        if mode == Mode.dora:
            per_layer += sum(o for _, o in dims)  # magnitude vector per output
        # PEFT modules_to_save=["embed_tokens", "lm_head"]: full trainable copies.
        extra = embedding_params(arch) if w.trainable_embeddings else 0
        return per_layer * arch.layers + extra
    if mode == Mode.ia3:
        return arch.layers * (2 * arch.kv_heads_ * arch.head_dim_ + mlp_width(arch))
    if mode == Mode.prompt_tuning:
        return 200 * arch.hidden  # PEFT examples: 20-200 virtual tokens
    if mode == Mode.freeze:
        # LLaMA-Factory freeze-tuning default: the last 2 layers train.
        return min(2, arch.layers) / arch.layers * (params - embedding_params(arch))
    return 0.0


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
        # under autocast (AMP on fp32 weights: ~2.5 B a value) the scores' matmul runs in
        # 16 bits and the softmax in fp32, as in a 16-bit model: 6 B; fp32 compute keeps 8
        attn = arch.heads * seq * (6 if elem_bytes < 4 else 8)
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
