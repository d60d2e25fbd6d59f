"""Words the answer acts on were listed as not understood: the trainer's name
("ultralytics rtdetr-l 训练": the answer quotes Ultralytics' amp=True and optimizer=auto),
"能全放显存吗" (every answer says whether it fits) and the Mac an Apple chip sits in
("m2 ultra 192gb mac studio"). Each is read now, in both languages' answers."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

UNREAD = {"zh": "没看懂、已忽略的部分", "en": "Not understood, ignored"}
LINES = [
    "ultralytics rtdetr-l 训练 batch 16 imgsz 640 3080 10g 会爆吗",
    "ollama 跑 deepseek-coder-v2:16b 7900xtx 24g 速度多少 能全放显存吗",
    "m2 ultra 192gb mac studio, deepseek-v2.5 q4_k_m in llama.cpp, fits? how fast?",
    "m3 max 64gb macbook pro qwen2.5-32b q4_k_m",
]


def _answer(line: str, lang: str) -> str:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("line", LINES)
def test_no_word_the_answer_uses_is_listed_as_not_understood(line: str, lang: str) -> None:
    assert parse_query(line).ignored == []
    assert UNREAD[lang] not in _answer(line, lang)


def test_the_trainer_named_is_read_as_the_framework() -> None:
    parsed = parse_query(LINES[0])
    assert parsed.workload is not None and parsed.workload.framework == "ultralytics"


def test_the_mac_is_read_as_the_apple_chip_it_holds_only() -> None:
    assert parse_query(LINES[2]).gpu_id == "apple-m2-ultra-192gb"
    # a Mac's name beside a card that is not Apple's is not silently dropped
    assert "mac" in parse_query("rtx 4090 mac qwen2.5-7b").ignored
