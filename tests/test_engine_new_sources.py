"""Terms found by reading sources the engine was not built against (bench/data/extra_cases.json
is the check, never the tuning): each test pins the mechanism, not a case's figure."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload


def awq(framework: str, prompt: int, new: int, batch: int = 1, model: str = "llama-2-7b"):
    return estimate(
        Workload(
            model=model,
            weights_format="awq-4bit",
            runtime="transformers",
            framework=framework,
            batch_size=batch,
            prompt_tokens=prompt,
            new_tokens=new,
            attention="eager",
        )
    )


# --- AutoAWQ fused layers --------------------------------------------------------------------


def test_autoawq_fused_cache_is_sized_by_max_new_tokens_not_prompt_plus_new():
    est = awq("autoawq", 2048, 2048).estimate
    assert est is not None
    kv = est.breakdown["kv_cache"]
    # Llama-2-7B: 512 KiB per token in fp16; the fused cache holds 2048 tokens, not 4096.
    assert abs(kv - 2048 * 512 * 1024) < 1024


def test_autoawq_fused_cache_doubles_for_a_prompt_longer_than_it():
    est = awq("autoawq", 3000, 1024).estimate
    assert est is not None
    assert abs(est.breakdown["kv_cache"] - 4096 * 512 * 1024) < 1024


def test_autoawq_short_run_peaks_at_load_with_the_fused_qkv_beside_the_originals():
    est = awq("autoawq", 64, 64).estimate
    assert est is not None
    copy = est.breakdown["fused_qkv"]
    # q, k, v of 32 layers: 4096 x 12288 weights each at AWQ's ~4.16 bits.
    expected = 32 * 4096 * 12288 * 4.156 / 8
    assert abs(copy / expected - 1) < 0.01
    assert "activations" not in est.breakdown


def test_autoawq_long_prefill_keeps_eager_scores_with_an_fp32_softmax():
    fused = awq("autoawq", 2048, 2048, batch=3).estimate
    plain = awq("transformers", 2048, 2048, batch=3).estimate
    assert fused is not None and plain is not None
    # 3 x 32 heads x 2048^2 scores at 10 B each (fp16 + fp32 softmax in and out).
    assert fused.breakdown["activations"] > 3 * 32 * 2048**2 * 10
    # The fused cache is not concatenated and not sized for prompt + new tokens.
    assert fused.breakdown["kv_cache"] < plain.breakdown["kv_cache"]


# --- DDP on a classic CNN: gradient buckets ----------------------------------------------------


def test_ddp_detector_keeps_a_second_copy_of_the_gradients_in_its_buckets():
    def run(n: int, par: str):
        return estimate(
            Workload(
                model="faster-rcnn-r50-fpn",
                mode="full",
                kind="classic",
                num_gpus=n,
                parallelism=par,
                batch_size=2,
            )
        ).estimate

    one, ddp = run(1, "none"), run(8, "ddp")
    assert one is not None and ddp is not None
    assert "ddp_buckets" not in one.breakdown
    assert ddp.breakdown["ddp_buckets"] == ddp.breakdown["gradients"]
    assert ddp.allocated_bytes - one.allocated_bytes == ddp.breakdown["ddp_buckets"]


# --- gradient accumulation not stated -----------------------------------------------------------


def full_ft(**kw):
    return estimate(
        Workload(
            params_b=1.1,
            mode="full",
            weights_format="bf16",
            mixed_precision=False,
            batch_size=4,
            seq_len=512,
            **kw,
        )
    )


def test_unstated_accumulation_keeps_the_gradients_through_the_next_forward_and_says_so():
    kept, one = full_ft(), full_ft(gradient_accumulation=1)
    assert kept.estimate is not None and one.estimate is not None
    assert kept.estimate.allocated_bytes > one.estimate.allocated_bytes
    assert {a.field: a.value for a in kept.assumed}["gradient_accumulation"] == "kept"
    assert "gradient_accumulation" not in {a.field for a in one.assumed}


def test_a_named_stack_uses_its_own_accumulation_default():
    # transformers' Trainer: 1 step unless told; LitGPT's configs accumulate.
    hf, lit = full_ft(framework="transformers"), full_ft(framework="litgpt")
    one = full_ft(gradient_accumulation=1, framework="transformers")
    assert hf.estimate is not None and lit.estimate is not None and one.estimate is not None
    assert hf.estimate.allocated_bytes == one.estimate.allocated_bytes
    assert lit.estimate.allocated_bytes > hf.estimate.allocated_bytes


# --- diffusers model offload: the text encoders' second pass for the negative prompt -----------


def test_model_offload_with_cfg_keeps_the_last_text_encoder_while_the_first_runs_again():
    def sd3(guidance: bool):
        return estimate(
            Workload(
                model="sd3-medium",
                kind="diffusion",
                weights_format="fp16",
                cpu_offload="model",
                guidance=guidance,
                image_width=1024,
                image_height=1024,
            )
        ).estimate

    cfg, plain = sd3(True), sd3(False)
    assert cfg is not None and plain is not None
    # T5-XXL (1.007B `wo` kept fp32) beside CLIP-G (0.695B x 2 B) with CFG; T5 alone without.
    t5 = (4.76 - 1.007) * 1e9 * 2 + 1.007e9 * 4
    assert abs(plain.breakdown["text_encoders"] - t5) < 1e6
    assert abs(cfg.breakdown["text_encoders"] - t5 - 0.695e9 * 2) < 1e6
