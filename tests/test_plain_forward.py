"""A prompt run as a plain forward and decoded by the program's own loop, and a cache handed
over as tuples (data/runtimes.toml [transformers] plain_forward_source, tuple_cache_source):
the CausalLM forward's logits_to_keep defaults to 0 (every position; only generate() sets
1), held by the caller's outputs through the first decode step; a tuple cache is wrapped
by DynamicCache.from_legacy_cache and concatenated beside the caller's tuple. Hand counts
for Llama-3.1-8B (hidden 4096, MLP 14336, vocabulary 128256, 32 layers x 8 KV heads x 128:
128 KiB of bf16 cache per token)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload

VOCAB, HIDDEN, MLP = 128256, 4096, 14336
KV_PER_TOKEN = 32 * 2 * 8 * 128 * 2


def _activations(**kw) -> tuple[int, str]:
    w = Workload(model="llama-3.1-8b", weights_format="bf16", runtime="transformers", **kw)
    terms = [t for t in estimate(w).estimate.terms if t.name == "activations"]
    return (terms[0].bytes, terms[0].formula_key) if terms else (0, "")


def test_a_plain_forward_computes_logits_for_every_prompt_token_at_any_release():
    """8,000 prompt tokens, 64 new, today's release: generate() keeps the last position's
    logits, so the prefill's peak is one layer's buffers (8000 x (3 x 4096 + 3 x 14336) x
    2 B); a plain forward computes all 8000 x 128256 logits in bf16 (2 B, no upcast since
    4.46), more than those buffers, held through the first decode step."""
    grown = KV_PER_TOKEN * 64
    generate, _ = _activations(prompt_tokens=8000, new_tokens=64)
    assert generate == 8000 * (3 * HIDDEN + 3 * MLP) * 2 - grown
    plain, key = _activations(prompt_tokens=8000, new_tokens=64, plain_forward=True)
    assert plain == 8000 * VOCAB * 2 - grown
    assert key == "activations.prefill"
    # under 4.44 the forward upcast them too: 6 B at the prefill, as generate() did then
    old, _ = _activations(
        prompt_tokens=8000, new_tokens=64, plain_forward=True, transformers_version="4.44"
    )
    assert old == 8000 * VOCAB * 6 - grown


def test_a_tuple_cache_is_concatenated_beside_the_callers_copy():
    """Llama-2-7B (32 layers x 32 KV heads x 128: 512 KiB of fp16 cache per token,
    vocabulary 32000) under transformers 4.44, 2,000 prompt tokens, 200 new, past_key_values
    as tuples: at the first decode step the caller's tuple (the prompt's cache) and the new
    concatenated cache coexist beside the prompt's fp32 logits (2000 x 32000 x 4 B): beyond
    the final cache of 2,200 tokens that is the logits plus 2000 - 200 tokens of cache, more
    than the prefill's 6 B logits. Without the tuples the prefill's logits are the peak."""
    kv_per_token = 32 * 2 * 32 * 128 * 2
    kw = {"prompt_tokens": 2000, "new_tokens": 200, "plain_forward": True}
    w = Workload(
        model="llama-2-7b",
        weights_format="fp16",
        runtime="transformers",
        transformers_version="4.44",
        **kw,
    )
    tuples = w.model_copy(update={"tuple_cache": True})
    got = [t for t in estimate(tuples).estimate.terms if t.name == "activations"][0]
    assert got.bytes == 2000 * 32000 * 4 + kv_per_token * (2000 - 200)
    assert got.formula_key == "activations.first_decode_concat_loop"
    plain = [t for t in estimate(w).estimate.terms if t.name == "activations"][0]
    assert plain.bytes == 2000 * 32000 * 6 - kv_per_token * 200


def test_both_are_read_from_the_question_said_and_kept_by_the_canonical_line():
    from advisor.parse import parse_query
    from advisor.parse.canonical import canonical_query

    cases = {
        "llama 3.1 8b plain forward 8k prompt transformers": ("plain_forward",),
        "llama-3.1-8b 不用generate 手写解码循环 8k": ("plain_forward",),
        "llama 3.1 8b transformers 4.44 tuple cache to_legacy_cache 4k": ("tuple_cache",),
    }
    for text, fields in cases.items():
        parsed = parse_query(text)
        for field in fields:
            assert getattr(parsed.workload, field), (text, field)
            again = parse_query(canonical_query(parsed))
            assert getattr(again.workload, field), (text, field)
        said = {a.field for a in estimate(parsed.workload).assumed}
        assert set(fields) <= said, text
