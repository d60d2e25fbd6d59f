"""Two traits of a model's own code under transformers generate(), each read from the code
(data/runtimes.toml [transformers]):

- a fused gate/up Linear (GLM/ChatGLM dense_h_to_4h, Phi-3 gate_up_proj) keeps its
  2 x intermediate output alive through the activation: 4 intermediate-wide prefill buffers;
- ChatGLM2/3 and GLM-4's remote code grows the prefill's cache as one tensor, concatenated
  layer by layer; the caching allocator keeps the outgrown blocks, which nvidia-smi shows
  (term allocator_reserve, replayed through advisor/memory/allocator.py).

Hand counts for GLM-4-9B: hidden 4096, intermediate 13696, 40 layers x 2 KV groups x 128."""

from __future__ import annotations

from advisor.hubspec import architecture
from advisor.memory import estimate
from advisor.memory.allocator import CachingAllocator, replay
from advisor.memory.runtimes.stacked_cache import prefill_events, reserve_bytes
from advisor.models.workload import Workload

MIB = 1 << 20
GLM4 = dict(layers=40, hidden=4096, heads=32, kv_heads=2, head_dim=128, inter=13696, elem=2)


def _terms(model: str, **kw) -> dict[str, int]:
    w = Workload(model=model, weights_format="bf16", runtime="transformers", **kw)
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.bytes for t in est.terms}


def test_the_allocator_rounds_requests_and_sizes_segments_as_pytorch_does():
    a = CachingAllocator()
    small = a.malloc(1000)  # rounded to 1024 B, carved from a 2 MiB small-pool segment
    assert small.size == 1024 and a.reserved == 2 * MIB
    a.malloc(3 * MIB)  # under 10 MiB: a 20 MiB large-pool segment, split
    assert a.reserved == 22 * MIB
    a.malloc(11 * MIB)  # fits the 17 MiB left of that segment (best fit): no new one
    assert a.reserved == 22 * MIB
    big = a.malloc(30 * MIB + 1)  # 10 MiB and over: the request rounded up to 2 MiB
    assert a.reserved == 22 * MIB + 32 * MIB
    a.free(big)
    a.malloc(31 * MIB)  # the freed 32 MiB block is reused
    assert a.reserved == 54 * MIB


def test_a_cache_grown_by_concatenation_leaves_blocks_the_loop_cannot_reuse():
    """The same layer loop, once keeping a cache per layer and once concatenating it into
    one tensor: the tensors alive peak alike, the segments reserved do not."""
    shape = (GLM4["layers"], 32000, 4096, 32, 2, 128, 13696, 2)
    peak_per_layer, reserved_per_layer = replay(list(prefill_events(*shape, stacked=False)))
    peak_grown, reserved_grown = replay(list(prefill_events(*shape, stacked=True)))
    assert abs(peak_grown - peak_per_layer) < 64 * MIB
    assert reserved_grown - reserved_per_layer == reserve_bytes(*shape) > 2 * (1 << 30)


def test_glm4_remote_code_prefill_shows_the_allocator_reserve_in_the_nvidia_smi_view():
    """GLM-4-9B over a 32,000-token prompt: the reserve is in the total (what nvidia-smi
    shows), not among the tensors; Llama 3.1 8B keeps a cache per layer and has none."""
    w = Workload(model="glm-4-9b", weights_format="bf16", runtime="transformers")
    est = estimate(w.model_copy(update={"prompt_tokens": 32000, "new_tokens": 512})).estimate
    assert est is not None
    terms = {t.name: t.bytes for t in est.terms}
    want = reserve_bytes(40, 32000, 4096, 32, 2, 128, 13696, 2)
    assert terms["allocator_reserve"] == want
    assert est.total_bytes - est.allocated_bytes >= want
    assert sum(terms.values()) == est.total_bytes
    llama = _terms("llama-3.1-8b", prompt_tokens=32000, new_tokens=512)
    assert "allocator_reserve" not in llama
    # one token of prompt or a prompt fed in chunks: no layer-by-layer growth to replay
    assert "allocator_reserve" not in _terms("glm-4-9b", prompt_tokens=1, new_tokens=64)
    chunked = _terms("glm-4-9b", prompt_tokens=32000, new_tokens=8, max_num_batched_tokens=2048)
    assert "allocator_reserve" not in chunked


def test_a_fused_gate_up_keeps_one_more_intermediate_buffer_in_the_prefill():
    """GLM-4-9B, 8,000 prompt tokens, 64 new: (3 x 4096 + 4 x 13696) x 2 B per prompt
    token, less the 64 tokens of cache not yet grown."""
    kv_per_token = 40 * 2 * 2 * 128 * 2
    got = _terms("glm-4-9b", prompt_tokens=8000, new_tokens=64)["activations"]
    assert got == 8000 * (3 * 4096 + 4 * 13696) * 2 - kv_per_token * 64


def test_hub_configs_name_the_code_generation():
    """model_type chatglm with ffn_hidden_size (ChatGLM2/3, GLM-4) has both traits; the same
    type without it (ChatGLM-6B v1: GELU MLP, a tuple per layer) has neither; Phi-3 fuses
    gate and up but keeps transformers' cache per layer."""
    base = {"num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 65024}
    v3 = architecture({**base, "model_type": "chatglm", "ffn_hidden_size": 13696})
    v1 = architecture({**base, "model_type": "chatglm", "inner_hidden_size": 16384})
    phi3 = architecture({**base, "model_type": "phi3", "intermediate_size": 8192})
    assert v3.fused_gate_up and v3.stacked_prefill_cache
    assert not v1.fused_gate_up and not v1.stacked_prefill_cache
    assert phi3.fused_gate_up and not phi3.stacked_prefill_cache
