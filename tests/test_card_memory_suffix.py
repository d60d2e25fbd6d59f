"""A card's memory written after its name ("4090 24g", "3090 24G", "a100 80g", "7900xtx 24g")
is the card's memory, never a count of cards: "7900xtx 24g" was read as a "7900xt" times 24
(the count sign "x" taken from inside the name) and answered for 24 RX 7900 XT."""

from __future__ import annotations

import re

import pytest

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def _answer(line: str, lang: str) -> str:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)


def _named_cards() -> list[tuple[str, str, int]]:
    """Every catalog card name and alias that carries no memory of its own, with its GB."""
    out = []
    for gpu in catalog.gpus().values():
        for name in sorted({gpu.name.lower(), *(gpu.aliases or [])}):
            if not re.search(r"\d\s*g(?:b|ib)?\b", name):
                out.append((name, gpu.id, round(gpu.vram_gb)))
    return out


def test_no_catalog_card_with_its_memory_after_it_becomes_a_count() -> None:
    wrong = []
    for name, _, gb in _named_cards():
        alone = parse_query(f"{name} 跑 qwen2.5-7b")
        if alone.gpu_id is None:
            continue  # a spelling the recognizer does not read alone is not this test's
        for unit in ("g", "G", "gb", "GB"):
            line = f"{name} {gb}{unit} 跑 qwen2.5-7b"
            got = parse_query(line)
            # the card read alone, or its sibling of that memory ("魔改2080ti 22g")
            same = got.gpu_id == alone.gpu_id or (
                got.gpu_id is not None and round(catalog.gpus()[got.gpu_id].vram_gb) == gb
            )
            if got.gpu_count not in (None, 1) or not same:
                wrong.append((line, alone.gpu_id, got.gpu_id, got.gpu_count))
    assert not wrong, wrong[:10]


@pytest.mark.parametrize(
    ("line", "gpu_id"),
    [
        ("7900xtx 24g", "rx-7900-xtx"),
        ("rx7900xtx 24gb", "rx-7900-xtx"),
        ("mi250x 128g", "mi250x"),
        ("mi300x 192GB", "mi300x"),
        ("4090 24g", "rtx-4090"),
        ("3090 24G", "rtx-3090"),
    ],
)
def test_memory_after_the_name_keeps_one_card(line: str, gpu_id: str) -> None:
    got = parse_query(f"ollama qwen2.5-14b q4_k_m {line}")
    assert got.gpu_id == gpu_id and got.gpu_count in (None, 1), (got.gpu_id, got.gpu_count)


def test_a_card_count_after_the_sign_still_counts() -> None:
    assert parse_query("a100x8 跑 qwen2.5-72b").gpu_count == 8
    assert parse_query("4090 x 2 跑 qwen2.5-32b").gpu_count == 2


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("zh", "1× AMD Radeon RX 7900 XTX（你的配置）"),
        ("en", "1× AMD Radeon RX 7900 XTX (your setup)"),
    ],
)
def test_the_answer_names_one_7900_xtx(lang: str, said: str) -> None:
    text = _answer("ollama 跑 qwen2.5-14b q4_k_m 7900xtx 24g", lang)
    assert said in text, text[:400]
    assert "24×" not in text and "RX 7900 XT " not in text.replace("XTX", "")
