"""The RTX 50-series GeForce cards are read as written, each with its memory ("5060ti 16g",
"5060 ti 8g", "5060", "5070"), sized from NVIDIA's published specifications
(gpus_owned.toml, each with its sources and read date), and their answers carry the
Blackwell (sm_120) note: CUDA 12.8+ / PyTorch cu128 builds. A fix list whose change on the
card named already runs the job offers the fewest more cards only."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "gpu_id", "vram_gb"),
    [
        ("5060ti 16g", "rtx-5060-ti-16gb", 16),
        ("5060ti", "rtx-5060-ti-16gb", 16),
        ("5060 ti 8g", "rtx-5060-ti-8gb", 8),
        ("rtx 5060", "rtx-5060", 8),
        ("5070", "rtx-5070", 12),
        ("5070 ti", "rtx-5070-ti", 16),
        ("5080", "rtx-5080", 16),
        ("5090", "rtx-5090", 32),
    ],
)
def test_rtx_50_cards_are_read_with_their_memory(typed: str, gpu_id: str, vram_gb: int) -> None:
    parsed = parse_query(f"qwen2.5-7b on {typed}")
    assert parsed.gpu_id == gpu_id and not parsed.ignored, (parsed.gpu_id, parsed.ignored)
    assert catalog.gpus()[gpu_id].vram_gb == vram_gb


def test_the_new_cards_carry_nvidias_figures_with_their_source_and_date() -> None:
    gpus = catalog.gpus()
    for gpu_id, bandwidth, tdp in (
        ("rtx-5060-ti-16gb", 448, 180),
        ("rtx-5060-ti-8gb", 448, 180),
        ("rtx-5060", 448, 145),
        ("rtx-5070", 672, 250),
    ):
        g = gpus[gpu_id]
        assert (g.memory_bandwidth_gbs, g.tdp_w, g.compute_capability) == (bandwidth, tdp, "12.0")
        assert g.spec_read_date == "2026-12-07"
        assert any("read 2026-12-07" in s for s in g.sources), g.sources
        assert "cu128" in (g.spec_notes or "")


GEMMA = {
    "zh": "vllm 起 gemma-3-12b-it bf16 单卡5060ti 16g 能起来吗 max-model-len 8192",
    "en": "vllm serve gemma-3-12b-it bf16 on one 5060ti 16gb, max-model-len 8192, will it start?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_5060ti_answer_names_the_card_and_the_blackwell_build(lang: str) -> None:
    text = plain_answer(GEMMA[lang], lang)
    assert "5060 Ti 16GB" in text and "5060ti" not in text.split("\n")[-1], text
    assert "cu128" in text and "12.8" in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_4bit_fix_on_the_card_is_not_followed_by_eight_cards(lang: str) -> None:
    fixes = "\n".join(plain_answer(GEMMA[lang], lang).splitlines()[:4])
    assert "awq" in fixes.lower()
    assert "8 张" not in fixes and "8 cards" not in fixes, fixes
