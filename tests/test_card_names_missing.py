"""Cards people name beside their catalogued neighbours (RTX 2070 / 2080 next to their SUPER
parts, RTX 4000 / 4500 Ada next to the A-series) are catalog cards with their memory, sources
and read date (gpus_owned.toml), and a card written as a plural ("l4s", "a100s", "3090s") is
the card asked, counted: neither falls back to an unnamed card of some size."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "gpu_id", "vram_gb"),
    [
        ("2070", "rtx-2070", 8),
        ("rtx 2070 8g", "rtx-2070", 8),
        ("2070 super", "rtx-2070-super", 8),
        ("2080", "rtx-2080", 8),
        ("2080 super", "rtx-2080-super", 8),
        ("2080 ti", "rtx-2080-ti", 11),
        ("rtx 4500 ada", "rtx-4500-ada", 24),
        ("rtx 4500 ada 24g", "rtx-4500-ada", 24),
        ("rtx 4000 ada", "rtx-4000-ada", 20),
        ("quadro rtx 4000", "quadro-rtx-4000", 8),
        ("rtx a4500", "rtx-a4500", 20),
    ],
)
def test_cards_are_read_with_their_memory(typed: str, gpu_id: str, vram_gb: int) -> None:
    parsed = parse_query(f"qwen2.5-7b on {typed}")
    assert parsed.gpu_id == gpu_id and not parsed.ignored, (parsed.gpu_id, parsed.ignored)
    assert catalog.gpus()[gpu_id].vram_gb == vram_gb


def test_the_new_cards_carry_source_and_date() -> None:
    for gpu_id in ("rtx-2070", "rtx-2080", "rtx-4000-ada", "rtx-4500-ada"):
        g = catalog.gpus()[gpu_id]
        assert g.spec_read_date == "2026-12-07"
        assert any("techpowerup.com/gpu-specs" in s for s in g.sources), g.sources


@pytest.mark.parametrize(
    ("typed", "gpu_id"),
    [("l4s", "l4"), ("t4s", "tesla-t4"), ("3090s", "rtx-3090"), ("4090s", "rtx-4090")],
)
def test_a_plural_card_is_the_card(typed: str, gpu_id: str) -> None:
    parsed = parse_query(f"how many {typed} to serve llama-3.1-8b to 50 users")
    assert parsed.gpu_id == gpu_id, (parsed.gpu_id, parsed.ignored)


def test_a_super_and_an_l40s_stay_their_own_cards() -> None:
    assert parse_query("qwen2.5-7b on a 4080s").gpu_id == "rtx-4080-super"
    assert parse_query("qwen2.5-7b on an l40s").gpu_id == "l40s"


QUESTIONS = {
    (
        "zh",
        "rtx 4500 ada",
    ): "qwen2.5-32b-instruct-awq 用transformers跑 输入30k token rtx 4500 ada 24g 够不够",
    (
        "en",
        "rtx 4500 ada",
    ): "qwen2.5-32b-instruct-awq with transformers, 30k tokens in, rtx 4500 ada 24g enough?",
    ("zh", "2070"): "bitsandbytes 8bit 加载 llama-3.1-8b-instruct 推理 2070 8g 够吗",
    ("en", "2070"): "bitsandbytes 8bit llama-3.1-8b-instruct inference on a 2070 8g, enough?",
    (
        "en",
        "l4s",
    ): "how many l4s to serve llama-3.1-8b-instruct to 50 concurrent users with 4k context each in vllm?",
    ("zh", "l4s"): "vllm 部署 llama-3.1-8b-instruct 50个并发用户 每人4k上下文 要几张 l4s",
}
NAMES = {"rtx 4500 ada": "RTX 4500 Ada", "2070": "RTX 2070", "l4s": "L4"}


@pytest.mark.parametrize(("lang", "card"), list(QUESTIONS))
def test_the_answer_names_the_card_asked(lang: str, card: str) -> None:
    text = plain_answer(QUESTIONS[(lang, card)], lang)
    assert NAMES[card] in text, text
    assert "没认出显卡" not in text and "not recognise" not in text.lower(), text
    assert "3090" not in text.split("\n")[3], text
