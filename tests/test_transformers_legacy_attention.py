"""transformers before 4.36 (data/runtimes.toml [transformers] sdpa_default_since): no SDPA
path, so attention left unnamed is the eager one, whose `softmax(scores, dtype=float32)
.to(query.dtype)` holds the 16-bit scores, their fp32 softmax and the copy back (8 B a
score in fp16; 10 B in bf16, which ATen converts to fp32 before the softmax); and until the last-token logits of 4.45 generate() kept the prefill's `outputs`,
its fp32 logits over the whole prompt, alive through the first decode step (beside a
second copy of the prompt's cache when the tuple cache was re-concatenated, before 4.36).
Hand counts for Llama-3.1-8B (hidden 4096, MLP 14336, vocabulary 128256, 32 heads, 128 KiB
of bf16 cache a token) and Llama-2-7B (32 x 32 x 128 MHA: 512 KiB a token, vocabulary
32000)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload


def _estimate(model: str, **kw):
    w = Workload(model=model, weights_format="bf16", runtime="transformers", **kw)
    return estimate(w)


def _assumptions(est) -> list[str]:
    return [f"{a.field} = {a.value}" for a in est.assumed]


def _activations(est) -> int:
    return sum(t.bytes for t in est.estimate.terms if t.name == "activations")


def test_before_4_36_unnamed_attention_is_eager_with_10_bytes_a_bf16_score():
    """4,096-token prompt in bf16, 64 new tokens: 32 heads x 4096^2 scores x 10 B (the bf16
    scores, ATen's fp32 copy of them and the fp32 softmax), the [1, 1, 4096, 4096] bf16 mask
    and the residual, normed input and queries (3 x 4096 x 2 B a token); above one layer's
    MLP-time buffers (4096 x (6 x 4096 + 4 x 14336) x 2 B) and the logits (6 B each)."""
    est = _estimate("llama-3.1-8b", prompt_tokens=4096, new_tokens=64, transformers_version="4.35")
    assert "attention = eager_before_sdpa" in _assumptions(est)
    attention = 32 * 4096 * 4096 * 10 + 4096 * 4096 * 2 + 4096 * 3 * 4096 * 2
    assert attention > 4096 * (6 * 4096 + 4 * 14336) * 2
    assert _activations(est) == attention
    sdpa = _estimate(
        "llama-3.1-8b",
        prompt_tokens=4096,
        new_tokens=64,
        transformers_version="4.35",
        attention="sdpa",
    )
    assert _activations(sdpa) == 4096 * 128256 * 6  # SDPA named: the logits are the peak


def test_from_4_36_unnamed_attention_stays_sdpa():
    for version in ("4.36", "4.45"):
        est = _estimate(
            "llama-3.1-8b", prompt_tokens=4096, new_tokens=64, transformers_version=version
        )
        assert "attention = sdpa" in _assumptions(est), version


def test_the_first_decode_step_holds_the_prompts_fp32_logits_beside_a_second_cache():
    """Llama-2-7B, 4.35, batch 8 x 2,048 tokens in context: the prompt's cache (8 x 2048 x
    512 KiB = 8.6 GB) is re-concatenated while the prefill's fp32 logits (8 x 2048 x 32000
    x 4 B = 2.1 GB) are still held: 10.7 GB past the final cache, above the prefill's
    logits (3.1 GB)."""
    est = _estimate(
        "llama-2-7b",
        batch_size=8,
        context_tokens=2048,
        transformers_version="4.35",
        attention="sdpa",
    )
    held = 8 * 2048 * 32000 * 4
    cache = 8 * 2048 * 32 * 2 * 32 * 128 * 2
    assert _activations(est) == cache + held
    keys = {t.formula_key for t in est.estimate.terms if t.name == "activations"}
    assert keys == {"activations.first_decode_concat"}
    # since 4.45 the prefill keeps the last logit only and the outputs are dropped
    modern = _estimate("llama-2-7b", batch_size=8, context_tokens=2048, transformers_version="4.45")
    assert _activations(modern) < held
