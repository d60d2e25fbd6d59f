"""Turing SUPER GeForce, Quadro RTX, RTX A-series and T-series workstation cards are read as
lab members write them ("2080s", "2070super", "a4500 20g", "rtx a2000 12g"), each with its
memory, sized from the TechPowerUp database (gpus_owned.toml, with sources and read date),
and an answer on one names the card instead of saying it is outside the card library."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "gpu_id", "vram_gb"),
    [
        ("2080s", "rtx-2080-super", 8),
        ("rtx 2080 super", "rtx-2080-super", 8),
        ("2070super", "rtx-2070-super", 8),
        ("2070 super", "rtx-2070-super", 8),
        ("2060 super", "rtx-2060-super", 8),
        ("a4500 20g", "rtx-a4500", 20),
        ("rtx a4500", "rtx-a4500", 20),
        ("rtx a2000", "rtx-a2000", 6),
        ("a2000 6g", "rtx-a2000", 6),
        ("rtx a2000 12g", "rtx-a2000-12gb", 12),
        ("a2000 12gb", "rtx-a2000-12gb", 12),
        ("a5500", "rtx-a5500", 24),
        ("t1000", "t1000", 4),
        ("t1000 8g", "t1000-8gb", 8),
        ("t600", "t600", 4),
        ("quadro rtx 4000", "quadro-rtx-4000", 8),
        ("Quadro RTX 5000", "quadro-rtx-5000", 16),
        ("2080 ti", "rtx-2080-ti", 11),
        ("2060", "rtx-2060", 6),
    ],
)
def test_cards_are_read_as_typed_with_their_memory(typed: str, gpu_id: str, vram_gb: int) -> None:
    parsed = parse_query(f"qwen2.5-7b on {typed}")
    assert parsed.gpu_id == gpu_id and not parsed.ignored, (parsed.gpu_id, parsed.ignored)
    assert catalog.gpus()[gpu_id].vram_gb == vram_gb


def test_the_cards_carry_their_figures_with_source_and_date() -> None:
    gpus = catalog.gpus()
    for gpu_id, bandwidth, tdp, cc, bf16 in (
        ("rtx-2080-super", 496, 250, "7.5", False),
        ("rtx-2070-super", 448, 215, "7.5", False),
        ("rtx-a4500", 640, 200, "8.6", True),
        ("rtx-a2000", 288, 70, "8.6", True),
        ("rtx-a2000-12gb", 288, 70, "8.6", True),
        ("t1000", 160, 50, "7.5", False),
    ):
        g = gpus[gpu_id]
        assert (g.memory_bandwidth_gbs, g.tdp_w, g.compute_capability) == (bandwidth, tdp, cc)
        assert g.bf16_supported is bf16
        assert g.spec_read_date == "2026-12-07"
        assert any("read 2026-12-07" in s for s in g.sources), g.sources


A4500 = {
    "zh": "unsloth qlora qwen2.5-14b max_seq_length 2048，一张 a4500 20g 够吗",
    "en": "unsloth qlora qwen2.5-14b, max_seq_length 2048, on one a4500 20g: enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_a4500_answer_names_the_card(lang: str) -> None:
    text = plain_answer(A4500[lang], lang)
    assert "RTX A4500" in text, text
    assert "不在显卡库" not in text and "not in the card" not in text.lower(), text
