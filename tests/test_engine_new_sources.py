"""Terms found by reading sources the engine was not built against (bench/data/extra_cases.json
is the check, never the tuning): each test pins the mechanism, not a case's figure."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models import Workload


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
