"""The trainers' own names for the training sequence length are read as it, not listed as
not understood: Unsloth's / TRL's max_seq_length, TRL's max_length, transformers'
model_max_length (vocab/words.toml [knobs] context)."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

GEMMA = {
    "zh": "unsloth qlora 微调 gemma-2-9b max_seq_length 2048 4060 8g 够吗",
    "en": "unsloth qlora gemma-2-9b, max_seq_length=2048, on a 4060 8gb, enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_max_seq_length_is_the_training_sequence_length(lang: str) -> None:
    parsed = parse_query(GEMMA[lang])
    assert parsed.workload.seq_len == 2048
    assert not parsed.ignored and "bare_length = 2048" not in parsed.assumed
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, canonical=GEMMA[lang], plain=True)
    assert "max_seq_length" not in text.splitlines()[-1], text.splitlines()[-1]


@pytest.mark.parametrize(
    "line",
    [
        "qlora llama-3-8b max_seq_len 4096 on 4090",
        "lora qwen2.5-7b max_length 4096 on 4090",
        "lora qwen2.5-7b model_max_length 4096 on 4090",
    ],
)
def test_other_trainer_length_words(line: str) -> None:
    parsed = parse_query(line)
    assert parsed.workload.seq_len == 4096 and not parsed.ignored, parsed.ignored


@pytest.mark.parametrize(
    ("line", "length"),
    [
        ("torchtune qlora llama3 8b bs4 seq2048 on a 5070 Ti 16GB", 2048),
        ("lora llama3 8b ctx8k bs2 on 4090", 8192),
        ("lora qwen2.5-7b seqlen4096 on 4090", 4096),
    ],
)
def test_the_length_word_glued_to_its_number_is_read_as_bs4_is(line: str, length: int) -> None:
    """'seq2048' is the training length, not a bare 2048 with 'seq' not understood."""
    parsed = parse_query(line)
    assert parsed.workload.seq_len == length and not parsed.ignored, parsed.ignored
    assert "bare_length = 2048" not in parsed.assumed


# The lengths as pasted from the trainers' configs and command lines: Unsloth / TRL
# (max_seq_length / max_seq_len), LLaMA-Factory (cutoff_len, YAML or a dict), ms-swift
# (swift sft --max_length), each in JSON, YAML, keyword and flag spelling.
PASTED = {
    "en": [
        ('unsloth qlora llama 3 8b "max_seq_length": 4096 on a 4090', None),
        ("unsloth qlora llama 3 8b max_seq_len=4096 on a 4090", None),
        ("llamafactory lora qwen2.5 7b {'cutoff_len': 4096} on a 4090", None),
        ("llamafactory lora qwen2.5 7b cutoff_len: 4096 on a 4090", None),
        ("swift sft qwen2.5-7b lora --max_length 4096 on a 4090", "ms-swift"),
    ],
    "zh": [
        ('用 unsloth qlora 微调 llama 3 8b，"max_seq_length": 4096，4090 够吗', None),
        ("unsloth qlora 微调 llama 3 8b max_seq_len=4096 4090 能跑吗", None),
        ("llamafactory lora 微调 qwen2.5 7b，{'cutoff_len': 4096}，4090 够吗", None),
        ("llamafactory lora 微调 qwen2.5 7b cutoff_len: 4096 4090 能跑吗", None),
        ("swift sft qwen2.5-7b lora --max_length 4096 4090 能跑吗", "ms-swift"),
    ],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lengths_pasted_from_trainer_configs(lang: str) -> None:
    for line, stack in PASTED[lang]:
        parsed = parse_query(line)
        assert parsed.workload is not None and parsed.workload.seq_len == 4096, line
        assert not parsed.ignored, (line, parsed.ignored)
        if stack:
            assert parsed.workload.framework == stack, line
