"""Engine physics checked against what the libraries allocate: modules a
quantizer leaves in higher precision, the loss path by transformers era, the diffusion
working set, vLLM's non-torch memory, encoder-only vision models."""

from __future__ import annotations

from advisor.memory import GIB, estimate
from advisor.models.workload import Workload


def term(result, name: str) -> float:
    return sum(t.bytes for t in result.estimate.terms if t.name == name) / GIB


# --- A. quantizers keep some modules in fp32 -------------------------------------------------


def test_bitsandbytes_keeps_t5_wo_in_fp32():
    """transformers' bnb quantizers honour T5's `_keep_in_fp32_modules = ['wo']`: 1.007B of
    the T5-XXL encoder's 4.76B weights stay fp32 (4 B), its token embedding (0.1316B) and
    CLIP-L's (0.038B) 16-bit (bitsandbytes replaces Linear layers only), the rest NF4 (4.5
    bits)."""
    r = estimate(Workload(model="flux.1-dev", weights_format="nf4", text_encoder_format="nf4"))
    t5 = ((4.76 - 1.007 - 0.1316) * 4.5 / 8 + 1.007 * 4 + 0.1316 * 2) * 1e9
    clip = ((0.123 - 0.038) * 4.5 / 8 + 0.038 * 2) * 1e9
    assert abs(term(r, "text_encoders") - (t5 + clip) / GIB) < 0.05


def test_torchao_and_quanto_leave_t5_wo_in_16_bit_in_a_pipeline():
    """Their transformers quantizers leave use_keep_in_fp32_modules False (no fp32 cast)
    but skip the keep-in-fp32 list (get_modules_to_not_convert): FLUX's T5 `wo` (1.007B)
    stays bf16, one byte per weight over int8, as do the token embeddings (T5 0.1316B, CLIP-L
    0.038B), which these quantizers do not replace."""
    for fmt in ("torchao-int8", "quanto-int8"):
        r = estimate(Workload(model="flux.1-dev", weights_format=fmt, text_encoder_format=fmt))
        want = (4.76 + 0.123 + 1.007 + 0.1316 + 0.038) * 1e9 / GIB
        assert abs(term(r, "text_encoders") - want) < 0.05


# --- F. encoder-only vision models have no KV cache ------------------------------------------


def test_sam_image_encoder_has_no_kv_cache_and_counts_the_patch_grid():
    """SAM ViT-H at batch 32: weights + one block's buffers over 32 x 4096 patch tokens;
    an encoder keeps no KV cache (the LLM path gave it 20 GiB of one)."""
    r = estimate(Workload(model="sam-vit-h", batch_size=32, weights_format="bf16"))
    names = {t.name for t in r.estimate.terms}
    assert "kv_cache" not in names
    # (3 x 1280 + 3 x 5120) x 2 B per token x 32 x 4096 tokens
    assert abs(term(r, "activations") - 32 * 4096 * (3 * 1280 + 3 * 5120) * 2 / GIB) < 0.01
    assert r.estimate.kv_bytes_per_token == 0


def test_vision_encoder_eager_attention_adds_the_score_matrices():
    sdpa = estimate(Workload(model="clip-vit-l-14", batch_size=64, attention="sdpa"))
    eager = estimate(Workload(model="clip-vit-l-14", batch_size=64, attention="eager"))
    scores = 64 * 16 * 257 * 257 * (2 + 4) / GIB
    assert abs(term(eager, "attention_scores") - scores) < 0.01
    assert term(eager, "activations") == term(sdpa, "activations")


# --- C. a term scaled to the peak says so ----------------------------------------------------


def test_training_terms_scaled_to_the_peak_say_what_share_is_shown():
    """A bf16-true full fine-tune of a 1.1B model without gradient accumulation: its
    gradients (1.1B x 2 B = 2.05 GiB) are not all alive with the activations; the breakdown
    shows a share, and must not print '1100M x 2 B' beside a smaller figure."""
    r = estimate(
        Workload(
            params_b=1.1,
            mode="full",
            weights_format="bf16",
            mixed_precision=False,
            batch_size=4,
            seq_len=512,
            gradient_accumulation=1,
        )
    )
    grads = next(t for t in r.estimate.terms if t.name == "gradients")
    full = 1.1e9 * 2
    assert grads.bytes < 0.9 * full  # the forward peak holds only part of them
    assert grads.formula_key == "at_peak"
    assert abs(grads.values["full_gib"] - full / GIB) < 0.01
    assert grads.values["share_pct"] == round(100 * grads.bytes / full)


# --- B. the loss path is said ------------------------------------------------------------------


def test_training_says_which_loss_path_its_logits_term_assumes():
    """12 B per logit is transformers >= 4.46's ForCausalLMLoss; older HF code peaks at the
    same 12 B and remote-code models of that era at 6 B, so the answer states the path."""
    from advisor.render import assumption

    r = estimate(Workload(model="llama-3.1-8b", mode="lora", seq_len=2048, batch_size=1))
    assumed = {a.field: a.value for a in r.assumed}
    assert assumed["loss_path"] == "fp32_logits"
    logits = next(t for t in r.estimate.terms if t.name == "logits")
    assert logits.values["bytes_per_logit"] == 12.0
    zh = assumption("zh", "loss_path", "fp32_logits")
    assert "fp32" in zh and "loss_path" not in zh and "损失" in zh
    chunked = estimate(
        Workload(model="llama-3.1-8b", mode="lora", seq_len=2048, batch_size=1, chunked_loss=True)
    )
    assert "loss_path" not in {a.field for a in chunked.assumed}


def test_a_t5_model_loaded_in_8bit_keeps_its_wo_in_fp32():
    """FLAN-T5-XXL under bitsandbytes int8: 48 blocks x 10240 x 4096 `wo` weights at 4 B
    instead of 1 B; under torchao int8 they are left unquantized in bf16 (2 B): transformers'
    get_modules_to_not_convert skips the keep-in-fp32 list without casting it."""
    bnb = estimate(Workload(model="flan-t5-xxl", weights_format="int8", mode="load_only"))
    ao = estimate(Workload(model="flan-t5-xxl", weights_format="torchao-int8", mode="load_only"))
    kept = 48 * 10240 * 4096
    assert abs(term(bnb, "weights") - term(ao, "weights") - kept * 2 / GIB) < 0.01


def test_torchao_and_quanto_leave_a_t5_wo_unquantized_in_16_bit():
    """The T5-XXL text encoder of a pipeline under torchao or optimum-quanto int8: its
    1.007B `wo` weights at 2 B (skipped by the quantizer, not cast), the rest at 1 B; under
    bitsandbytes they are fp32 (4 B). The token embedding (0.1316B) stays 16-bit too."""
    from advisor.memory import quantizers

    for fmt in ("torchao-int8", "quanto-int8"):
        te = quantizers.component_weight_bytes(4.76, fmt)
        rest = quantizers.estimate_weight_bytes((4.76 - 1.007 - 0.1316) * 1e9, None, fmt)
        assert abs(te - rest - 1.007e9 * 2 - 0.1316e9 * 2) < 1e6
    assert quantizers.kept_module_bytes_per_weight("int8") == 4.0
    assert quantizers.kept_module_bytes_per_weight("bf16") == 0.0


def test_a_quantize_call_on_a_loaded_pipeline_quantizes_the_t5_wo_too():
    """torchao `quantize_` / quanto `quantize` on modules already loaded replace every
    Linear: no keep-in-fp32 list is consulted, so `wo` is int8 like the rest (the token
    embedding, not a Linear, stays 16-bit either way)."""
    from advisor.memory import quantizers

    for fmt in ("torchao-int8", "quanto-int8"):
        skipped = quantizers.component_weight_bytes(4.76, fmt)
        direct = quantizers.component_weight_bytes(4.76, fmt, quantize_after_load=True)
        assert abs(skipped - direct - 1.007e9) < 1e6
        linears = quantizers.estimate_weight_bytes((4.76 - 0.1316) * 1e9, None, fmt)
        assert abs(direct - linears - 0.1316e9 * 2) < 1e6


def test_the_float16_keep_in_fp32_rule_is_a_data_switch(monkeypatch):
    """On by default (quantizers.toml [float16] says why): an fp16 T5-XXL carries its
    1.007B `wo` weights at 4 B; switched off, all of it is 2 B."""
    from advisor.memory import quantizers

    on = quantizers.component_weight_bytes(4.76, "fp16")
    table = {**quantizers._table(), "float16": {"keep_in_fp32_modules": False}}
    monkeypatch.setattr(quantizers, "_table", lambda: table)
    off = quantizers.component_weight_bytes(4.76, "fp16")
    assert abs(off - 4.76e9 * 2) < 1e6
    assert abs(on - off - 1.007e9 * 2) < 1e6


def test_model_offload_leaves_a_bitsandbytes_8bit_denoiser_on_the_gpu():
    """diffusers enable_model_cpu_offload places no hook on a bnb 8-bit component: while the
    VAE decodes, the int8 FLUX transformer is still on the card (pipeline_utils.py)."""
    bf16 = estimate(Workload(model="flux.1-dev", weights_format="bf16", cpu_offload="model"))
    int8 = estimate(Workload(model="flux.1-dev", weights_format="int8", cpu_offload="model"))
    nf4 = estimate(Workload(model="flux.1-dev", weights_format="nf4", cpu_offload="model"))
    assert "resident_8bit" not in {t.name for t in nf4.estimate.terms}
    assert "resident_8bit" not in {t.name for t in bf16.estimate.terms}
    names = {t.name for t in int8.estimate.terms}
    # the denoiser phase holds it anyway; any other phase adds it beside its own weights
    if "weights" in names:
        assert term(int8, "weights") > 10
    else:
        assert term(int8, "resident_8bit") > 10
    assert int8.estimate.allocated_bytes > nf4.estimate.allocated_bytes
