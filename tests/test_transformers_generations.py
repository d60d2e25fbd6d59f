"""transformers generate() by release and by cache (data/runtimes.toml [transformers]):
tuple caches re-concatenated each step before 4.36, logits over the whole prompt (16-bit
lm_head output + `.float()`, 6 B each) until 4.45, the last position's only since
(PR #31292); a static cache (cache_implementation="static") allocated whole before the
prefill. Hand counts for Llama-3.1-8B (hidden 4096, MLP 14336, vocabulary 128256, 32
layers x 8 KV heads x 128: 128 KiB of bf16 cache per token)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload

VOCAB, HIDDEN, MLP = 128256, 4096, 14336
KV_PER_TOKEN = 32 * 2 * 8 * 128 * 2


def _activations(**kw) -> int:
    w = Workload(model="llama-3.1-8b", weights_format="bf16", runtime="transformers", **kw)
    # a term of 0 B is left out of the breakdown
    return sum(t.bytes for t in estimate(w).estimate.terms if t.name == "activations")


def test_transformers_4_36_to_4_44_computes_fp32_logits_for_the_whole_prompt():
    """8,000 prompt tokens: 8000 x 128256 x 6 B = 6.15 GB of logits, more than the layer
    buffers (8000 x (3 x 4096 + 3 x 14336) x 2 B = 0.88 GB); 64 new tokens grow the cache
    after the prefill, so what the prefill needs beyond the final cache is the logits less
    those 64 tokens of cache."""
    logits = 8000 * VOCAB * 6
    grown = KV_PER_TOKEN * 64
    for version in ("4.36", "4.40", "4.44"):
        got = _activations(prompt_tokens=8000, new_tokens=64, transformers_version=version)
        assert got == logits - grown, version
    modern = _activations(prompt_tokens=8000, new_tokens=64, transformers_version="4.45")
    assert modern == 8000 * (3 * HIDDEN + 3 * MLP) * 2 - grown
    assert _activations(prompt_tokens=8000, new_tokens=64) == modern  # unnamed: today's


def test_a_static_cache_is_whole_before_the_prefill():
    """cache_implementation="static" for 8,192 tokens with a 1,000-token prompt: the prefill
    buffers (1000 x (3 x 4096 + 3 x 14336) x 2 B) sit on top of the whole cache; a dynamic
    cache has not grown its other 7,192 tokens yet."""
    buffers = 1000 * (3 * HIDDEN + 3 * MLP) * 2
    static = _activations(prompt_tokens=1000, context_tokens=8192, static_cache=True)
    dynamic = _activations(prompt_tokens=1000, context_tokens=8192)
    assert static == buffers
    assert dynamic == max(buffers - KV_PER_TOKEN * 7192, 0) == 0


def test_a_static_cache_is_read_from_the_question_and_kept_by_its_canonical_line():
    from advisor.parse import parse_query
    from advisor.parse.canonical import canonical_query

    for text in (
        "qwen2.5-7b static cache ctx 8192",
        "qwen2.5-7b cache_implementation=static 8k",
        "qwen2.5-7b 静态缓存 8k 上下文",
    ):
        parsed = parse_query(text)
        assert parsed.workload.static_cache, text
        again = parse_query(canonical_query(parsed))
        assert again.workload.static_cache and again.workload.context_tokens == 8192, text
    assert not parse_query("qwen2.5-7b ctx 8192").workload.static_cache
