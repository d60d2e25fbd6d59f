"""Assumptions in plain words, only those that matter for the model family: no LLM
vocabulary (KV cache, logits, training sequences, context, attention kernels) in answers
about SAM, a ViT, an encoder reranker or a diffusion pipeline; and the split over cards
named by the runtime that does it (transformers' device_map="auto" puts whole layers on
each card; tensor parallelism is a serving engine's)."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

LLM_WORDS = {
    "en": ("KV cache", "logits", "training sequences", "context", "attention"),
    "zh": ("KV 缓存", "logits", "训练序列", "上下文", "注意力"),
}


def _part(q: str, lang: str, view: str) -> str:
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, canonical=q, view=view, plain=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "q",
    ["sam vit-h inference", "vit-base finetune", "bge-reranker-large inference", "sdxl on 3060"],
)
def test_a_non_llm_answer_assumes_nothing_in_llm_words(q: str, lang: str) -> None:
    said = _part(q, lang, "assumptions")
    assert "Assumed" in said or "默认假设" in said
    assert not [w for w in LLM_WORDS[lang] if w in said], said


def test_a_vit_states_its_input_length_as_inputs() -> None:
    assert "inputs of 197 tokens" in _part("vit-base finetune", "en", "assumptions")
    assert "输入长度 197 个 token" in _part("vit-base finetune", "zh", "assumptions")


def test_an_llm_keeps_its_own_words() -> None:
    said = _part("llama3-8b lora", "en", "assumptions")
    assert "training sequences of 2048 tokens" in said and "logits" in said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_transformers_split_is_layers_and_a_vllm_split_is_tensor_parallel(lang: str) -> None:
    def headline(q: str) -> str:  # the line judging the 4 cards asked about
        return next(x for x in _part(q, lang, "full").splitlines() if x.startswith("4× "))

    hf, served = headline("glm-4-9b on 4x 3080"), headline("glm-4-9b vllm on 4x 3080")
    layers = {"en": "layers split over the cards", "zh": "按层分到各张卡"}[lang]
    tp = {"en": "tensor parallel (TP)", "zh": "张量并行（TP）"}[lang]
    assert layers in hf and tp not in hf, hf
    assert tp in served and layers not in served, served


def test_a_transformers_layer_split_says_one_card_works_at_a_time() -> None:
    def codes(q: str) -> set[str]:
        return {p.code for p in recommend_query(parse_query(q)).pitfalls}

    assert "layer_split_sequential" in codes("glm-4-9b on 4x 3080")
    assert "layer_split_sequential" not in codes("glm-4-9b vllm on 4x 3080")
    assert "layer_split_sequential" not in codes("glm-4-9b on 3090")
