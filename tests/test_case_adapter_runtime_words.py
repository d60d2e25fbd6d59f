"""The case adapter reads a runtime's name as a word, as the bot's word tables do (their
left edge: advisor/parse/vocab.py): a model or project whose name holds it is not it."""

from __future__ import annotations

from advisor.parse import parse_query
from checks.cases import RUNTIME_WORDS, _first


def test_videollama2_s_trainer_is_not_ollama():
    text = "VideoLLaMA2 train.py (transformers Trainer + PEFT + DeepSpeed)"
    assert _first(RUNTIME_WORDS, text) == "transformers"
    assert _first(RUNTIME_WORDS, "ollama run qwen2.5:7b") == "ollama"


def test_the_bot_reads_the_same_word_the_same_way():
    assert parse_query("ollama qwen2.5 7b 推理 4090").workload.runtime == "ollama"  # type: ignore[union-attr]
