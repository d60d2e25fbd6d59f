"""A model read beside a leftover word shaped like a model name ("mask3former swin-b"): the
answer says first that the figures are for the model read alone, in both languages, as it
does for a name typed with a size ("olmo2:7b")."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from tests.conftest import plain_answer

ASKED = {
    "en": "mask3former swin-b coco panoptic training in mmdet, batch 2, enough on a 24gb a30?",
    "zh": "mmdet 训练 mask3former swin-b 全景分割 a30 24g 够吗",
}
SAID = {"en": "I did not recognise “mask3former”", "zh": "没认出「mask3former」"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unread_model_name_beside_a_backbone_is_said_before_the_figures(lang: str) -> None:
    parsed = parse_query(ASKED[lang])
    assert parsed.unread_name == "mask3former"
    lines = plain_answer(ASKED[lang], lang).splitlines()
    note = next(i for i, line in enumerate(lines) if SAID[lang] in line)
    figure = next(i for i, line in enumerate(lines) if "A30" in line)
    assert note < figure and "Swin-B" in lines[note]


def test_a_vision_architectures_name_ending_is_read_as_a_model_name() -> None:
    assert parse_query("oneformer swin-b training on a 3090").unread_name == "oneformer"


@pytest.mark.parametrize(
    "q",
    [
        "qwen2.5-14b lora on a 5060ti 16g",  # a card's word, not a model
        "sdxl lora with kohya on a 3060 12gb at 1024",
        "llama3-8b inference on a 4090, 8k context",
        "llama 3 8b with A10 GPU, OOM with VLLM, but holds good on HF transformer pipline",
    ],
)
def test_card_words_and_understood_lines_raise_no_note(q: str) -> None:
    assert parse_query(q).unread_name is None
