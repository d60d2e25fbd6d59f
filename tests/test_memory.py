"""Engine terms against hand-worked examples, properties, and bad workloads."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from advisor import catalog
from advisor.memory import UnknownFormatError, UnknownModelError, estimate, kv_bytes_per_token
from advisor.models import Workload

GIB = 2**30


def test_llama2_7b_fp16_kv_cache_at_4096_tokens_is_2_gib():
    """32 layers x 32 KV heads x 128 x 2 (K,V) x 2 B = 512 KiB/token; x 4096 = 2 GiB."""
    arch = catalog.models()["llama-2-7b"].arch
    assert kv_bytes_per_token(arch, "fp16", 4096, None) * 4096 == 2 * GIB


def test_gqa_cuts_kv_cache_llama31_8b_is_1_gib_per_8k():
    """Survey anchor: Llama-3.1-8B (8 KV heads) = 128 KiB/token -> 1 GiB per 8K tokens."""
    arch = catalog.models()["llama-3.1-8b"].arch
    assert kv_bytes_per_token(arch, "bf16", 8192, None) * 8192 == GIB


def test_mla_cache_is_compressed_for_deepseek_v3():
    arch = catalog.models()["deepseek-v3"].arch
    # 61 layers x (512 + 64) x 2 B = 70,272 B/token, far below the 128-head MHA equivalent.
    assert kv_bytes_per_token(arch, "bf16", 4096, "vllm") == 61 * 576 * 2


def test_sliding_window_layers_are_capped_at_the_window():
    arch = catalog.models()["gemma-2-9b"].arch
    short = kv_bytes_per_token(arch, "bf16", 4096, None)
    long = kv_bytes_per_token(arch, "bf16", 8192, None)
    assert long < short  # per token: half the layers stop growing past 4096


def test_guide_example_7b_fp16_weights_are_about_14_gb():
    est = estimate(Workload(params_b=7, weights_format="fp16", mode="load_only")).estimate
    assert est.breakdown["weights"] == 14e9


def test_guide_example_7b_fp16_with_overhead_near_18_gb():
    """Guide: 14 GB of weights, ~18 GB with ~30% overhead at a short chat context."""
    est = estimate(Workload(params_b=7, weights_format="fp16", context_tokens=2048)).estimate
    assert 15e9 <= est.total_bytes <= 19.5e9


def test_13b_fp16_does_not_fit_a_24gb_card():
    est = estimate(Workload(model="llama-2-13b", weights_format="fp16")).estimate
    assert est.total_bytes > catalog.gpus()["rtx-4090"].usable_vram_bytes


def test_llama2_13b_batch16_legacy_generation_is_near_50_gib_not_the_formula_29():
    """Issue 2: measured 50 GiB (2023 transformers, tuple cache) where params x bytes x 1.2
    says 29."""
    w = Workload(
        model="llama-2-13b",
        weights_format="fp16",
        batch_size=16,
        prompt_tokens=512,
        new_tokens=512,
        runtime="transformers",
        legacy_generate=True,
    )
    est = estimate(w).estimate
    assert 45 * GIB < est.total_bytes < 56 * GIB


def test_modern_generate_holds_one_kv_cache_not_two():
    """transformers >= 4.45 (DynamicCache, last-token logits): weights + one cache + a
    prefill that fits under the cache's growth (Qwen speed benchmark, 4.51.3)."""
    base = dict(model="llama-2-13b", weights_format="fp16", batch_size=16, prompt_tokens=512)
    w = Workload(**base, new_tokens=512, runtime="transformers")
    est = estimate(w).estimate
    legacy = estimate(w.model_copy(update={"legacy_generate": True})).estimate
    kv = est.breakdown["kv_cache"]
    assert est.allocated_bytes < est.breakdown["weights"] + kv * 1.3
    assert legacy.allocated_bytes > est.allocated_bytes + kv * 0.8


def test_pure_bf16_full_finetune_is_below_16_bytes_per_param():
    w = Workload(
        model="llama-3.2-3b",
        mode="full",
        weights_format="bf16",
        batch_size=1,
        seq_len=256,
        gradient_checkpointing=True,
        optimizer="adamw",
    )
    est = estimate(w).estimate
    assert est.allocated_bytes < 3.21e9 * 16
    assert est.breakdown["optimizer"] == pytest.approx(3.21e9 * 4, rel=0.01)  # two bf16 moments


def test_mixed_precision_adamw_keeps_fp32_master_and_moments():
    w = Workload(model="llama-3.2-3b", mode="full", weights_format="bf16", mixed_precision=True)
    est = estimate(w).estimate
    assert est.breakdown["optimizer"] == pytest.approx(3.21e9 * 12, rel=0.01)


def test_lora_without_checkpointing_needs_far_more_than_with():
    base = dict(model="llama-3.1-8b", mode="lora", batch_size=4, seq_len=2048)
    off = estimate(Workload(**base, gradient_checkpointing=False)).estimate.allocated_bytes
    on = estimate(Workload(**base, gradient_checkpointing=True)).estimate.allocated_bytes
    assert off > 1.5 * on


def test_qlora_weights_are_about_a_quarter_of_bf16():
    q = estimate(Workload(model="llama-3.1-8b", mode="qlora")).estimate.breakdown["weights"]
    b = estimate(Workload(model="llama-3.1-8b", mode="lora")).estimate.breakdown["weights"]
    assert 0.28 < q / b < 0.45  # embeddings and lm_head stay 16-bit


def test_moe_holds_all_experts():
    est = estimate(Workload(model="mixtral-8x7b", weights_format="bf16")).estimate
    assert est.breakdown["weights"] > 46e9 * 2 * 0.95


def test_gguf_q4_k_m_uses_its_real_bits_per_weight():
    est = estimate(Workload(params_b=7, weights_format="q4_k_m", mode="load_only")).estimate
    assert est.breakdown["weights"] == pytest.approx(7e9 * 4.85 / 8)


def test_sdxl_four_images_at_1024_peaks_in_vae_decode_near_measured():
    est = estimate(
        Workload(
            model="sdxl",
            weights_format="fp16",
            images_per_prompt=4,
            image_width=1024,
            image_height=1024,
        )
    ).estimate
    assert 20 * GIB < est.allocated_bytes < 27 * GIB
    assert "vae_decode" in est.breakdown


def test_zero3_more_cards_never_raise_per_card_memory():
    prev = None
    for n in (1, 2, 4, 8):
        w = Workload(
            model="llama-3.1-8b", mode="full", num_gpus=n, parallelism="zero3" if n > 1 else "none"
        )
        b = estimate(w).estimate.total_bytes
        if prev is not None:
            assert b <= prev
        prev = b


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 64), st.integers(1, 32))
def test_inference_is_monotone_in_batch_and_context(batch, kctx):
    a = estimate(
        Workload(model="qwen2.5-7b", batch_size=batch, context_tokens=kctx * 1024)
    ).estimate
    b = estimate(
        Workload(model="qwen2.5-7b", batch_size=batch + 1, context_tokens=kctx * 1024)
    ).estimate
    c = estimate(
        Workload(model="qwen2.5-7b", batch_size=batch, context_tokens=(kctx + 1) * 1024)
    ).estimate
    assert b.total_bytes >= a.total_bytes and c.total_bytes >= a.total_bytes


@settings(max_examples=30, deadline=None)
@given(st.floats(0.1, 1000))
def test_monotone_in_parameters(p):
    a = estimate(Workload(params_b=p)).estimate.total_bytes
    b = estimate(Workload(params_b=p * 1.5)).estimate.total_bytes
    assert b >= a


def test_breakdown_terms_add_up_to_allocated_plus_overhead():
    est = estimate(Workload(model="llama-3.1-8b", mode="lora", batch_size=2)).estimate
    assert sum(est.breakdown.values()) == est.total_bytes


def test_estimate_reports_assumed_defaults():
    r = estimate(Workload(model="qwen2.5-7b"))
    assert "batch_size = 1" in r.assumptions and any(
        a.startswith("context_tokens") for a in r.assumptions
    )


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"params_b": -7}, "params_b"),
        ({"params_b": 1e30}, "params_b"),
        ({"params_b": 7, "batch_size": 0}, "batch_size"),
        ({"mode": "inference"}, "model"),
    ],
)
def test_bad_workloads_name_the_field(fields, field):
    with pytest.raises(ValidationError) as exc:
        Workload(**fields)
    assert field in str(exc.value)


def test_unknown_format_is_a_named_error():
    with pytest.raises(UnknownFormatError):
        estimate(Workload(params_b=7, weights_format="fp17"))


def test_unknown_model_suggests_close_names():
    with pytest.raises(UnknownModelError) as exc:
        estimate(Workload(model="qwen2.8-7b"))
    assert exc.value.suggestions


def test_rendering_has_no_formula():
    r = estimate(Workload(kind="rendering"))
    assert r.estimate is None


def test_every_catalog_model_estimates():
    for spec in catalog.models().values():
        r = estimate(Workload(model=spec.id))
        assert r.estimate.total_bytes > 0, spec.id


def test_catalog_has_60_models_42_gpus_and_sources():
    assert len(catalog.models()) >= 60
    assert len(catalog.gpus()) >= 42
    assert all(m.source for m in catalog.models().values())
    assert all(f.source for f in catalog.formats().values())
    assert all(p.source and p.read_date for p in catalog.load_prices())


def test_generating_one_token_is_a_prefill_with_no_cache_concatenation():
    """HF generate() concatenates the KV cache at decode steps; with max_new_tokens=1 there
    is none (optimum benchmark_gptq.py: Llama-2-13B fp16, prompt 512, batch 16 peaks at
    33.4 GiB prefill-only vs 50.3 GiB with 512 new tokens)."""
    from advisor.memory import estimate
    from advisor.models import Workload

    base = {
        "model": "llama-2-13b",
        "weights_format": "fp16",
        "batch_size": 16,
        "prompt_tokens": 512,
        "runtime": "transformers",
        "legacy_generate": True,
    }
    prefill = estimate(Workload(new_tokens=1, **base)).estimate
    decoding = estimate(Workload(new_tokens=512, **base)).estimate
    assert prefill.breakdown["activations"] < prefill.breakdown["kv_cache"] / 2
    assert decoding.breakdown["activations"] >= decoding.breakdown["kv_cache"] * 0.9


def test_a_layers_backward_buffers_never_coexist_with_the_logits():
    """The loss's buffers are freed by its own backward before any layer's backward runs:
    the training peak counts the larger of the two, and the breakdown still sums to it."""
    from advisor.memory import estimate
    from advisor.models import Workload

    e = estimate(Workload(model="llama-3.1-8b", mode="lora", seq_len=2048, batch_size=2)).estimate
    b = e.breakdown
    assert "logits" in b and "backward_transient" not in b
    assert sum(b.values()) == e.total_bytes
