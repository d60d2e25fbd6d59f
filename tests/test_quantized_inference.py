"""Quantized-weight inference as the loaders run it (data/quantizers.toml [load_dtype] and
[bitsandbytes_4bit_inference]): what bitsandbytes leaves unquantized stays in the load dtype
(float16 unless told, float32 when the model is loaded so), and a prompt of more than one
token goes through MatMul4Bit, which dequantizes the widest layer (compute dtype float32
unless the config names one).

Hand counts for Llama-2-7B (catalog: 6.74B parameters, hidden 4096, MLP 11008, vocabulary
32000, embeddings and lm_head untied)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.render import assumption

PARAMS = 6.74e9
KEPT = 2 * 32000 * 4096  # embed_tokens + lm_head, left alone by bitsandbytes
HIDDEN, MLP = 4096, 11008


def _terms(**kw) -> dict[str, int]:
    r = estimate(Workload(model="llama-2-7b", weights_format="nf4", **kw))
    return {t.name: t.bytes for t in r.estimate.terms}


def _assumed(**kw) -> dict[str, str]:
    r = estimate(Workload(model="llama-2-7b", weights_format="nf4", **kw))
    return {a.field: a.value for a in r.assumed}


def test_bnb_4bit_keeps_embeddings_and_lm_head_in_the_float32_it_was_loaded_in():
    """torch_dtype=float32 (or "auto" on an fp32 checkpoint): the 0.262B embedding and lm_head
    weights stay fp32, 4 B each, beside 6.478B weights at 4.5 bits (NF4 with its absmax)."""
    quantized = (PARAMS - KEPT) * 4.5 / 8
    fp32 = _terms(load_dtype="fp32", mode="load_only")["weights"]
    fp16 = _terms(mode="load_only")["weights"]
    assert abs(fp32 - (quantized + KEPT * 4)) <= 1
    # the default: bitsandbytes' quantizer forces float16 when no torch_dtype is given
    assert abs(fp16 - (quantized + KEPT * 2)) <= 1


def test_a_model_loaded_in_float32_keeps_its_cache_and_hidden_states_in_float32():
    """transformers' cache takes the key/value states' dtype: 32 layers x 2 x 4096 x 4 B per
    token, 1,024 tokens = 1 GiB (0.5 GiB in 16-bit)."""
    fp32 = _terms(load_dtype="fp32", prompt_tokens=1000, new_tokens=24)
    fp16 = _terms(prompt_tokens=1000, new_tokens=24)
    assert fp32["kv_cache"] == 32 * 2 * 4096 * 4 * 1024
    assert fp16["kv_cache"] == 32 * 2 * 4096 * 2 * 1024
    assert _assumed(load_dtype="fp32", prompt_tokens=1000)["load_dtype"] == "fp32"


def test_bnb_4bit_prefill_dequantizes_the_widest_layer_in_its_default_float32_compute():
    """512-token prompt, load_in_4bit alone: torch_dtype float16, bnb_4bit_compute_dtype
    float32. MatMul4Bit dequantizes up_proj (4096 x 11008) to fp16 (2 B) and casts it to fp32
    (4 B); its fp32 output for 512 tokens (512 x 11008 x 4 B) is cast back afterwards."""
    want = HIDDEN * MLP * (2 + 4) + 512 * MLP * 4
    assert _terms(prompt_tokens=512, new_tokens=16)["dequant_buffer"] == want
    assert _assumed(prompt_tokens=512, new_tokens=16)["bnb_compute_dtype"] == "fp32"
    # bnb_4bit_compute_dtype=bfloat16 as most recipes set it: one bf16 copy, no fp32 output
    told = _terms(prompt_tokens=512, new_tokens=16, compute_dtype="bf16", load_dtype="bf16")
    assert told["dequant_buffer"] == HIDDEN * MLP * 2


def test_a_single_token_prompt_takes_the_gemv_kernel_and_dequantizes_nothing():
    """matmul_4bit: a one-row input (A.numel() == A.shape[-1]) goes to gemv_4bit."""
    assert "dequant_buffer" not in _terms(prompt_tokens=1, new_tokens=64)
    # other 4-bit loaders have their own kernels (GPTQ: kernel_scratch)
    r = estimate(Workload(model="llama-2-7b", weights_format="gptq-4bit", runtime="transformers"))
    assert "dequant_buffer" not in {t.name for t in r.estimate.terms}


def test_the_loader_defaults_are_said_in_both_languages():
    en = assumption("en", "bnb_compute_dtype", "fp32")
    zh = assumption("zh", "bnb_compute_dtype", "fp32")
    assert "bnb_4bit_compute_dtype" in en and "4-bit 计算精度" in zh
    assert "fp32" in assumption("en", "load_dtype", "fp32")
    assert "加载" in assumption("zh", "load_dtype", "fp32")


def test_torchao_int8_weight_only_copies_the_widest_weight_on_every_call():
    """_linear_fp_act_int8_weight_impl: `torch.mm(x, w_int8.t().to(x.dtype))`, eagerly, even
    for one decoded token: up_proj 4096 x 11008 in bf16 (2 B)."""
    for prompt in (1, 512):
        r = estimate(
            Workload(
                model="llama-2-7b",
                weights_format="torchao-int8",
                prompt_tokens=prompt,
                new_tokens=8,
            )
        )
        terms = {t.name: t.bytes for t in r.estimate.terms}
        assert terms["dequant_buffer"] == HIDDEN * MLP * 2
        assert "bnb_compute_dtype" not in {a.field for a in r.assumed}


def test_quanto_scales_a_16_bit_copy_of_the_weight_on_every_call():
    """optimum-quanto qbytes_mm: `output_scales * weights` (int8: one bf16 copy of up_proj);
    float8 weights are cast first, so two 16-bit copies exist at once."""
    for fmt, copies in (("quanto-int8", 1), ("quanto-fp8", 2)):
        r = estimate(Workload(model="llama-2-7b", weights_format=fmt, prompt_tokens=1))
        terms = {t.name: t.bytes for t in r.estimate.terms}
        assert terms["dequant_buffer"] == HIDDEN * MLP * 2 * copies, fmt


def test_llm_int8_keeps_an_int32_output_and_int8_input_copies_per_prompt_token():
    """MatMul8bitLt: double_quant makes two int8 copies of the input (CA, CAt: 2 x 4096 B per
    token) and igemmlt an int32 output (up_proj: 4 x 11008 B per token) before mm_dequant."""
    r = estimate(Workload(model="llama-2-7b", weights_format="int8", prompt_tokens=512))
    terms = {t.name: t.bytes for t in r.estimate.terms}
    assert terms["int8_matmul_buffer"] == 512 * (4 * MLP + 2 * HIDDEN)
    assert "dequant_buffer" not in terms
    # CTranslate2's int8 (faster-whisper) is not bitsandbytes
    w = Workload(model="whisper-large-v3", weights_format="int8", framework="faster-whisper")
    assert "int8_matmul_buffer" not in {t.name for t in estimate(w).estimate.terms}


def test_gptq_loads_in_float16_unless_told():
    """transformers' GptqHfQuantizer.update_torch_dtype: torch.float16 when no torch_dtype is
    given (data/quantizers.toml [load_dtype] fp16_default_formats); a dtype given is kept."""
    from advisor.memory.quantizers import load_dtype

    assert load_dtype("gptq-4bit", None) == "fp16"
    assert load_dtype("gptq-8bit", None) == "fp16"
    assert load_dtype("gptq-4bit", "bf16") == "bf16"
    assert load_dtype("awq-4bit", None) == "bf16"
