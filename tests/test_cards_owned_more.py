"""Cards people name that the catalog lacked: the GTX 1070 and 1070 Ti (Pascal, 8 GB), the
MX450 (a 2 GB laptop part), the RTX 3050 Laptop (4 GB, and the 6 GB refresh when its
memory is written) and the Intel Arc A770 (16 GB, no CUDA). Each was answered as a generic
card of its memory ("没认出显卡"); now each is its own catalog card, and the Arc's answer
says its stack (SYCL / XPU) in both languages."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def _answer(line: str, lang: str) -> str:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)


@pytest.mark.parametrize(
    ("line", "gpu_id", "gb"),
    [
        ("bnb 4bit 跑 mistral-7b v0.3，gtx1070 8g 够吗", "gtx-1070", 8),
        ("mmdet fcos r50 caffe 1x bs2 gtx 1070 ti 8g 训练", "gtx-1070-ti", 8),
        ("openai whisper small 推理 mx450 2g", "mx450", 2),
        ("unsloth qlora gemma-3-4b on an rtx 3050 laptop 6g", "rtx-3050-laptop-6gb", 6),
        ("unsloth qlora gemma-3-4b on an rtx 3050 laptop", "rtx-3050-laptop", 4),
        ("3050 笔记本 6g 跑 qwen2.5-3b", "rtx-3050-laptop-6gb", 6),
        (
            "unsloth qlora gemma-3-4b-it on a 6gb rtx 3050 laptop, seq 2048",
            "rtx-3050-laptop-6gb",
            6,
        ),
        ("intel arc a770 16g ollama qwen2.5-14b q4_k_m", "arc-a770", 16),
    ],
)
def test_the_card_is_read_as_itself(line: str, gpu_id: str, gb: int) -> None:
    parsed = parse_query(line)
    assert parsed.gpu_id == gpu_id and parsed.unknown_card is None, parsed
    assert round(catalog.gpus()[gpu_id].vram_gb) == gb
    for lang in ("zh", "en"):
        text = _answer(line, lang)
        assert catalog.gpus()[gpu_id].name in text.split("\n", 3)[1], text[:300]
        assert "没认出显卡" not in text and "not recognised" not in text.lower()


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("zh", ["没有 CUDA", "「llama.cpp」", "SYCL（Level Zero）上下文", "xpu-smi"]),
        ("en", ["has no CUDA", "llama.cpp's SYCL", "SYCL (Level Zero) context", "xpu-smi"]),
    ],
)
def test_the_arc_answer_says_its_stack(lang: str, said: list[str]) -> None:
    text = _answer("intel arc a770 16g ollama qwen2.5-14b q4_k_m", lang)
    for words in said:
        assert words in text, (words, text)
    assert "CUDA 上下文" not in text and "CUDA context" not in text


def test_qlora_on_the_arc_is_refused_for_bitsandbytes() -> None:
    text = _answer("qlora qwen2.5-7b on intel arc a770", "en")
    assert "bitsandbytes" in text and "Cannot run as asked" in text


def test_an_intel_card_the_catalog_lacks_stays_unknown() -> None:
    parsed = parse_query("intel arc b580 12g 跑 qwen2.5-7b")
    assert parsed.gpu_id is None and parsed.unknown_card == "intel arc b580"


def test_a_size_before_a_laptop_card_is_its_memory_only_where_the_part_has_it() -> None:
    """ "我的笔记本 32g 4060": 32 GB is the laptop's RAM, never a 32 GB card."""
    parsed = parse_query("我的笔记本 32g 4060 跑 qwen2.5-7b")
    assert parsed.gpu_id == "rtx-4060-laptop" and parsed.vram_gib is None
