"""A llama.cpp owner whose card is too small is told partial offload (-ngl N, the layers
that fit) before renting more cards."""

from __future__ import annotations

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def test_a_3060_owner_gets_ngl_before_renting() -> None:
    q = "qwen2.5-32b q4_k_m llama.cpp 在 3060 12g 上"
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY")
    assert rec.fixes and rec.fixes[0].startswith("gpu_layers:"), rec.fixes
    layers = int(rec.fixes[0].partition(":")[2])
    assert 0 < layers < 64  # Qwen2.5-32B has 64 layers: part of them on the card
    zh = render("answer", "zh", rec=rec, parsed=parsed, canonical=q, plain=True)
    head = zh.splitlines()[2]
    assert f"-ngl {layers}」" in head and "租" not in head, head
