"""A weights line that holds a load's peak says so: openai-whisper's load_model() holds the
fp16 checkpoint beside the fp32 model (Whisper large-v3-turbo, 809M params: 4.5 GiB at load,
3.0 GiB resident in fp32), so its bar is not labelled as the resident weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.memory.terms import LOAD_PEAK_KEYS
from advisor.render import label
from tests.conftest import plain_answer

TURBO = {
    "zh": "whisper large-v3-turbo 用官方openai-whisper转录 2070super 8g 够吗",
    "en": "whisper large-v3-turbo with the official openai-whisper on a 2070 super 8gb, enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_openai_whisper_weights_bar_says_it_is_the_load_peak(lang: str) -> None:
    text = plain_answer(TURBO[lang], lang)
    peak = label(lang, "term.weights_load_peak")
    line = next(ln for ln in text.splitlines() if "🟦" in ln)
    assert peak in line and "4.5 GiB" in line, line
    assert f"🟦 {label(lang, 'term.weights')} 4.5 GiB" not in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_resident_weights_keep_their_plain_label(lang: str) -> None:
    text = plain_answer(
        "qwen2.5-7b bf16 on a 4090" if lang == "en" else "qwen2.5-7b bf16 4090", lang
    )
    assert f"🟦 {label(lang, 'term.weights')} " in text
    assert label(lang, "term.weights_load_peak") not in text


def test_every_load_peak_key_is_written_by_a_load_peak_caller() -> None:
    root = Path(__file__).resolve().parent.parent / "advisor" / "memory"
    source = "".join(p.read_text() for p in root.rglob("*.py") if p.name != "terms.py")
    for key in LOAD_PEAK_KEYS - {"weights.before_quantization"}:  # load_peak's own default
        assert f'key="{key}"' in source, key
