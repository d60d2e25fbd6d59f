"""advisor.recommend.fixes.cheap_floor: the bytes per card no cheap fix takes off (weights and
the CUDA context). The search over cards skips a card's cheap-fix trials when its cap is
under the floor, so the floor must hold under every cheap fix's own estimate, on every
count the search tries; and a card under it costs no trial estimate."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import fixes
from advisor.recommend.card_counts import workload_for
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.fix_candidates import CHEAP, candidate_fixes, setting_fixes
from advisor.recommend.fixes import ACTIVATION_FIXES, CheapFixes, cheap_floor

# Inference on each runtime family, training in each recipe, diffusion: the cheap fixes of
# each (batch, checkpointing, fused loss, 8-bit optimizer, vLLM flags, KV cache types).
LINES = [
    "qwen2.5-72b awq 32k",
    "vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ --tensor-parallel-size 2",
    "用 ollama 跑 deepseek-r1:32b，我的卡是 4090",
    "llama-3.1-70b exl2 4bit 16k",
    "llama-3.1-8b q8_0 llama.cpp 32k",
    "训练 llama3-8b lora batch 8 seq 4096",
    "8×A100 全参微调 70b zero3",
    "qlora 70b 2x3090",
    "LLaMA-Factory + DeepSpeed ZeRO-3 全参 qwen2.5-14b 8 张 a800",
    "sdxl lora training batch 4",
    "flux.1-dev lora 训练 batch 2",
]


@pytest.mark.parametrize("line", LINES)
def test_no_cheap_fix_goes_under_the_floor(line: str) -> None:
    w = parse_query(line).workload
    assert w is not None
    tried = 0
    for count in (1, 2, 4, 8):
        result = trial_estimate(workload_for(w, count))
        if result.estimate is None:
            continue
        floor = cheap_floor(result)
        for code, make in setting_fixes(result):
            if code.partition(":")[0] not in CHEAP:
                continue
            trial = trial_estimate(make())
            assert trial.estimate is not None
            assert trial.estimate.total_bytes >= floor, (line, count, code)
            tried += 1
    assert tried > 0, line  # each line has cheap fixes to check


def test_a_card_under_the_floor_costs_no_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    w = parse_query("qwen2.5-72b int4 32k").workload
    assert w is not None
    result = trial_estimate(w)
    small = min(
        (g for g in catalog.gpus().values() if g.rentable),
        key=lambda g: g.usable_vram_bytes,
    )
    assert small.usable_vram_bytes * 0.8 < cheap_floor(result)
    calls: list[object] = []

    def counted(x: object) -> object:
        calls.append(x)
        return trial_estimate(x)  # type: ignore[arg-type]

    monkeypatch.setattr(fixes, "trial_estimate", counted)
    assert CheapFixes().first(result, small, False) is None
    assert calls == []


def _step_bound(result: object) -> bool:
    est = result.estimate  # type: ignore[attr-defined]
    return est is not None and any(t.name == "optimizer_step" for t in est.terms)


def test_a_peak_set_by_the_optimizer_step_is_not_lowered_by_activation_fixes() -> None:
    """fixes._cannot_lower skips, where the estimate is over the cap, the fixes that only
    shrink what the forward and backward pass hold when the optimizer step sets the peak:
    each such fix's own estimate must come out at or above it, on every count."""
    checked = 0
    for line in LINES + ["全参微调 qwen2.5-7b", "pretrain llama3-8b fsdp 4 卡 batch 4 seq 4096"]:
        w = parse_query(line).workload
        assert w is not None
        for count in (1, 2, 4, 8):
            result = trial_estimate(workload_for(w, count))
            if not _step_bound(result):
                continue
            for code, make in candidate_fixes(result):
                if code.partition(":")[0] not in ACTIVATION_FIXES:
                    continue
                trial = trial_estimate(make())
                assert trial.estimate is not None
                assert trial.estimate.total_bytes >= result.estimate.total_bytes, (line, code)
                assert fixes._cannot_lower(code, result)
                checked += 1
    assert checked >= 10  # full fine-tunes whose step sets the peak, on several counts


def test_activation_fixes_are_tried_where_the_activations_set_the_peak() -> None:
    """The skip is for a step-bound peak only: a LoRA run's peak is its activations, and a
    shorter sequence there is a real fix."""
    w = parse_query("训练 llama3-8b lora batch 8 seq 4096").workload
    assert w is not None
    result = trial_estimate(w)
    assert not _step_bound(result)
    codes = [c for c, _ in candidate_fixes(result) if c.partition(":")[0] in ACTIVATION_FIXES]
    assert codes
    assert not any(fixes._cannot_lower(c, result) for c in codes if c != "checkpointing")


@pytest.mark.parametrize(
    "line", [ln for ln in LINES if "训练" in ln or "全参" in ln or "lora" in ln]
)
def test_the_free_tiers_fp16_change_stays_over_the_floor(line: str) -> None:
    """free_tiers.free_card says no without an estimate when the floor is over the free
    card's cap: the job judged in fp16 (a T4 has no bf16) keeps the weights and the context."""
    w = parse_query(line).workload
    assert w is not None and w.mode.is_training
    for count in (1, 2, 4, 8):
        result = trial_estimate(workload_for(w, count))
        assert result.estimate is not None
        trial = trial_estimate(result.workload.model_copy(update={"compute_dtype": "fp16"}))
        assert trial.estimate is not None
        assert trial.estimate.total_bytes >= cheap_floor(result), (line, count)
