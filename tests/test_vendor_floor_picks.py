"""A long-context model whose vendor states a total VRAM for the context asked (Qwen2.5-7B-
Instruct-1M: at least 120 GB over all cards at 1M tokens): the other cards offered hold at
least that much (recommend/search.py, pitfalls/model.vendor_floor_gb): 2x L20 and 1x H20
(96 GB) were offered beside the card's note."""

from __future__ import annotations

import pytest

from advisor.catalog import find_gpu
from tests.conftest import answers_both


@pytest.mark.parametrize(
    "q",
    [
        "vllm 跑 qwen2.5-7b-instruct-1m 想开满1m上下文 4张a100 80g 够吗",
        "vllm qwen2.5-7b-instruct-1m at the full 1m context on 4x a100 80gb, enough?",
    ],
)
def test_no_alternative_falls_below_the_vendors_stated_total(q: str) -> None:
    """Every card offered holds 120 GB or more over its count."""
    rec, texts = answers_both(q)
    assert rec.options
    for o in rec.options:
        gpu = find_gpu(o.gpu_id)
        assert gpu is not None and gpu.vram_gb * o.count >= 120, (o.gpu_id, o.count)
    assert "120 GB" in texts["en"] and "120 GB" in texts["zh"]
