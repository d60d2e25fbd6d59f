"""A split by whole layers (transformers device_map="auto", llama.cpp's layer split, a
pipeline) runs one card at a time: a token reads the whole model at one card's bandwidth,
so more cards hold a bigger model but do not make it faster."""

from __future__ import annotations

from advisor import catalog
from advisor.decode_speed import decode_fit
from advisor.parse import parse_query
from advisor.recommend import recommend


def _rec(text: str):
    p = parse_query(text)
    assert p.ok, p.error
    return recommend(p.workload, gpu_id=p.gpu_id, currency="CNY")


def test_70b_over_eight_3090s_by_layers_decodes_at_one_cards_bandwidth() -> None:
    """Before: "8x 3090, device_map=auto (one card at a time); ~20 tok/s" for 70B bf16."""
    rec = _rec("70b 推理 8张3090")
    o = rec.named
    assert o.count == 8 and o.decode_tokens_per_s is not None
    gpu = catalog.gpus()["rtx-3090"]
    whole_model = 70e9 * 2
    eff = decode_fit("transformers", gpu).efficiency
    ceiling = eff * gpu.memory_bandwidth_gbs * 1e9 / whole_model  # ~5.5 tok/s
    assert o.decode_tokens_per_s <= ceiling * 1.05
    assert o.decode_tokens_per_s >= ceiling * 0.5


def test_more_cards_in_a_layer_split_are_not_faster() -> None:
    two = _rec("qwen2.5-14b 推理 2张3090").named
    four = _rec("qwen2.5-14b 推理 4张3090").named
    assert four.decode_tokens_per_s <= two.decode_tokens_per_s  # type: ignore[operator]


def test_vllm_tensor_parallel_still_speeds_up_with_cards() -> None:
    one = _rec("qwen2.5-14b vllm 1张a100").named
    two = _rec("qwen2.5-14b vllm 2张a100").named
    assert two.decode_tokens_per_s > one.decode_tokens_per_s  # type: ignore[operator]
