"""LMDeploy (TurboMind) takes its KV block pool at start: --cache-max-entry-count of the
memory cudaMemGetInfo reports free once the weights are loaded (InternLM/lmdeploy
src/turbomind/models/llama/BlockManager.cc GetBlockCount: `free * ratio / block_size`),
0.8 by default since v0.2.1 (lmdeploy/messages.py TurbomindEngineConfig). The estimate
is what the job needs; nvidia-smi on a card shows the weights and context plus that share
of what they left (advisor/memory/runtimes/lmdeploy.py, data/runtimes.toml [lmdeploy])."""

from __future__ import annotations

from advisor import catalog
from advisor.memory import estimate
from advisor.memory.runtimes import coefficient, runtime_data
from advisor.memory.runtimes.lmdeploy import cache_share, share_bytes
from advisor.memory.terms import GIB
from advisor.models.choices import Mode, Runtime
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.parse.canonical import canonical_query
from tests.conftest import answers_both


def _est(**kw: object):  # noqa: ANN202
    w = Workload(model="internlm2.5-7b", mode=Mode.inference, runtime=Runtime.lmdeploy, **kw)
    result = estimate(w)
    assert result.estimate is not None
    return w, result.estimate, result.assumed


def test_the_default_share_is_lmdeploys_0_8_of_the_free_memory_with_its_source():
    assert coefficient("lmdeploy", "cache_max_entry_count") == 0.8
    source = runtime_data()["lmdeploy"]["source"]
    assert "BlockManager.cc" in source and "messages.py" in source and "2026-12-07" in source
    w, _, assumed = _est()
    assert cache_share(w) == 0.8
    assert any(a.field == "cache_max_entry_count" for a in assumed)


def test_the_pool_is_the_share_of_what_the_weights_and_context_leave_on_the_card():
    """GetBlockCount: blocks = free x ratio / block size, free after the weights."""
    w, est, assumed = _est(cache_max_entry_count=0.5)
    assert not any(a.field == "cache_max_entry_count" for a in assumed)
    kv = sum(t.bytes for t in est.terms if t.name == "kv_cache")
    before = est.total_bytes - kv  # weights, context and slack: all there before the pool
    card = 80 * GIB
    assert share_bytes(est, card, cache_share(w)) == before + int(0.5 * (card - before))
    # the pool grows with the share and never shows less than the job needs
    assert share_bytes(est, card, 0.8) > share_bytes(est, card, 0.5)
    assert share_bytes(est, est.total_bytes, 0.8) == est.total_bytes
    # the estimate itself is the need: weights + the asked context's KV blocks, no
    # transformers prefill buffers
    assert {t.name for t in est.terms} == {"weights", "kv_cache", "runtime_overhead"}


def test_the_share_is_read_from_the_question_as_the_flag_is_typed():
    for q, want in (
        ("lmdeploy internlm2.5-7b cache-max-entry-count 0.5 4090", 0.5),
        ("lmdeploy chat internlm2.5-7b --cache-max-entry-count 0.01 on a 3090", 0.01),
        ("internlm2.5-7b turbomind --cache-max-entry-count=20% a100", 0.2),
    ):
        p = parse_query(q)
        assert p.workload is not None, q
        assert p.workload.runtime == Runtime.lmdeploy, q
        assert p.workload.cache_max_entry_count == want, q
        again = parse_query(canonical_query(p))
        assert again.workload is not None and again.workload.cache_max_entry_count == want
    bad = parse_query("lmdeploy internlm2.5-7b cache-max-entry-count 5")
    assert bad.error is not None and bad.error.code == "bad_value"


def test_the_answer_shows_the_pool_nvidia_smi_shows_and_says_why_in_both_languages():
    rec, texts = answers_both("lmdeploy internlm2.5-7b cache-max-entry-count 0.5 my 4090")
    est = rec.setup.estimate
    assert est is not None and est.runtime == Runtime.lmdeploy
    card = catalog.gpus()[rec.named.gpu_id].usable_vram_bytes
    assert est.nvidia_smi_bytes == share_bytes(est, card, 0.5) > est.total_bytes
    assert "LMDeploy reserves" in texts["en"] and "--cache-max-entry-count 0.5" in texts["en"]
    assert "LMDeploy 启动时预占" in texts["zh"] and "--cache-max-entry-count 0.5" in texts["zh"]


def test_requests_served_at_once_hold_their_kv_blocks_together():
    _, one, _ = _est(context_tokens=4096)
    _, many, _ = _est(context_tokens=4096, concurrency=8)
    kv_one, kv_many = (sum(t.bytes for t in e.terms if t.name == "kv_cache") for e in (one, many))
    assert kv_many == 8 * kv_one


def test_a_smaller_kv_cache_is_offered_in_lmdeploys_own_setting():
    from advisor.render import labels

    rec, texts = answers_both("lmdeploy serve qwen2.5-7b 20 concurrent users context 8k my 4090")
    assert "--quant-policy 8" in texts["en"] and "--kv-cache-dtype" not in texts["en"]
    assert "--quant-policy 8" in labels("zh")["fix"]["kv_int8_lmdeploy"]
