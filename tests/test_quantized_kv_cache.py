"""transformers' quantized KV cache (QuantizedCache, HQQ or quanto backend) as its code
allocates it (data/kv_cache.toml [transformers] quantized_*, cache_utils.py
QuantizedLayer.update, v4.56-v5.5): every layer holds the whole sequence, sliding window or
not; each decode step dequantizes one layer's cache and concatenates it (two copies of its
keys and values in the model dtype); up to residual_length tokens per layer wait in the
model dtype. Hand counts for Mistral-7B-v0.1 (32 layers x 8 KV heads x 128, sliding window
4096 on every layer)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload

LAYERS, KV_HEADS, HEAD_DIM = 32, 8, 128
ELEMENTS_PER_TOKEN = LAYERS * 2 * KV_HEADS * HEAD_DIM


def _terms(**kw) -> dict[str, int]:
    w = Workload(model="mistral-7b", weights_format="fp16", runtime="transformers", **kw)
    return {t.name: t.bytes for t in estimate(w).estimate.terms}


def test_a_quantized_cache_keeps_every_layer_whole_past_the_sliding_window():
    """32,768 prompt tokens + 128 new: HQQ int4 stores 0.5 B + 4 B of scale and zero per 64
    values (0.5625 B) for all 32,896 tokens of every layer, 1152 MiB (the 1152.0 MB
    QuantizedCache (INT4) a 32k-token Mistral-7B run reports); the 16-bit DynamicCache the
    engine sizes for generate() keeps the 4,096-token window."""
    tokens = 32768 + 128
    int4 = _terms(prompt_tokens=32768, new_tokens=128, kv_cache_dtype="int4")
    assert int4["kv_cache"] == int(ELEMENTS_PER_TOKEN * 0.5625 * tokens)
    int8 = _terms(prompt_tokens=32768, new_tokens=128, kv_cache_dtype="int8")
    assert int8["kv_cache"] == int(ELEMENTS_PER_TOKEN * 1.0625 * tokens)
    fp16 = _terms(prompt_tokens=32768, new_tokens=128)
    assert fp16["kv_cache"] == int(ELEMENTS_PER_TOKEN * 2 * 4096)


def test_each_decode_step_dequantizes_one_layer_and_concatenates_it():
    """`torch.cat([dequant_keys, self.keys, key_states])`: one layer's keys and values twice
    in fp16 over the whole sequence (2 x 2 x 8 x 128 x 2 B x 32,896), plus 128 residual
    tokens in fp16 in each of the 32 layers; a 16-bit cache has no such term."""
    tokens = 32768 + 128
    per_layer_token = 2 * KV_HEADS * HEAD_DIM * 2
    want = per_layer_token * (2 * tokens + LAYERS * 128)
    for nbits in ("int8", "int4", "int2"):
        got = _terms(prompt_tokens=32768, new_tokens=128, kv_cache_dtype=nbits)
        assert got["kv_dequant_buffer"] == want, nbits
    assert "kv_dequant_buffer" not in _terms(prompt_tokens=32768, new_tokens=128)


def test_a_quantized_cache_asked_in_words_reaches_the_same_reading():
    from advisor.parse import parse_query

    for text in (
        "mistral 7b transformers int4 kv cache 32k context",
        "mistral 7b hqq int8 kv cache 32k",
        "mistral-7b 量化kv缓存 int8 transformers 32k",
    ):
        w = parse_query(text).workload
        assert w.kv_cache_dtype in ("int4", "int8"), text
        terms = {t.name for t in estimate(w).estimate.terms}
        assert "kv_dequant_buffer" in terms, text
