"""A model that does not run on the user's own small card as asked: the answer says the
longest context it runs at there (below the 2k the shorter-context changes stop at), tight
with the lazy CUDA context of PyTorch 2.1+ where only that fits, or that it runs at no
context at all; never "rent 2 cards" of a card the user owns (advisor/recommend/
context_fit.py, verdict.own_card_context, verdict.without_more_cards)."""

from __future__ import annotations

import pytest

from advisor.recommend.card_counts import adds_cards
from advisor.recommend.context_fit import CONTEXT_STEP
from checks import answer_invariants as inv
from tests.conftest import answers_both

BAICHUAN_4K = "baichuan2-7b bnb 4bit 推理，1660ti 6g 能跑吗"
BAICHUAN_1K = "baichuan2-7b bnb 4bit 推理，1k上下文，1660ti 6g 能跑吗"
LLAMA2_NF4 = "llama-2-7b bnb 4bit 推理 4k 上下文，1660ti 6g 能跑吗"


@pytest.mark.parametrize("q", [BAICHUAN_4K, BAICHUAN_1K])
def test_a_model_whose_weights_and_context_outgrow_the_card_runs_at_no_context(q: str) -> None:
    """Baichuan2-7B NF4 on a 6 GB GTX 1660 Ti: was "❌ take a card with more memory" at 4k
    and "❌ … rent 2 cards (tight)" at 1k; now "❌ at any context" with the figure at the
    shortest context under the lazy CUDA context, and no more cards of the user's card."""
    rec, texts = answers_both(q)
    v = rec.verdict
    assert v.state == "no_fit" and v.fix is None
    assert v.no_context_tokens == CONTEXT_STEP and v.no_context_lazy
    assert v.weights_bytes < rec.named.usable_bytes < v.no_context_bytes < rec.named.per_gpu_bytes
    assert not any(adds_cards(c) for c in rec.fixes)
    head = {lang: text.split("\n")[2] for lang, text in texts.items()}
    assert "too small at any context" in head["en"] and "PyTorch 2.1+" in head["en"]
    assert "take a card with more memory" in head["en"] and "more cards" not in head["en"]
    assert "上下文再短也装不下" in head["zh"] and "换显存更大的卡" in head["zh"]
    for lang, text in texts.items():
        assert "rent 2 cards" not in text and "租 2 张卡" not in text
        assert not inv.contradictions(text, lang)


def test_a_model_that_runs_at_a_short_context_gets_the_longest_one() -> None:
    """Llama-2-7B NF4 at 4k on the same card: nothing at 2k or more runs, 512 tokens does
    (tight): the answer says that context and its figure, not "does not fit"."""
    rec, texts = answers_both(LLAMA2_NF4)
    v = rec.verdict
    assert v.fix is not None and v.fix.startswith("shorter_context")
    tokens = int(v.fix.partition(":")[2])
    assert CONTEXT_STEP <= tokens < 2048 and tokens % CONTEXT_STEP == 0
    assert v.word in ("fits_with", "tight_with")
    assert v.fixed_bytes is not None and v.fixed_bytes < rec.named.usable_bytes
    assert f"context cut to {tokens} tokens" in texts["en"].split("\n")[2]
    assert f"上下文缩短到 {tokens} tokens" in texts["zh"].split("\n")[2]
    for lang, text in texts.items():
        assert not inv.contradictions(text, lang)


def test_a_smaller_format_replaces_the_first_one_when_only_both_changes_together_run() -> None:
    """Llama-2-13B fp16 on a 12 GB RTX 3060: 8-bit at 2k stayed at 16 GiB, so no stack was
    found and the answer was "❌ … take a card with more memory"; NF4 at 2k runs (tight,
    ~11.1 GiB): the answer says that (stacked_fixes._next_step)."""
    rec, texts = answers_both("llama-2-13b fp16 推理 我的 3060 12g")
    v = rec.verdict
    assert v.fix is not None and v.fix.startswith("stack:")
    assert "quantize:nf4" in v.fix and "shorter_context:" in v.fix
    assert v.word == "tight_with"
    assert "weights quantized to nf4" in texts["en"].split("\n")[2]
    assert "权重量化到 nf4" in texts["zh"].split("\n")[2]
    for lang, text in texts.items():
        assert not inv.contradictions(text, lang)


def test_a_serving_engine_is_not_answered_with_a_context_at_which_it_runs() -> None:
    """vLLM's start-up profile and flags decide on a small card, not the context: Qwen2.5-14B
    AWQ on a 12 GB card is not said to be "too small at any context"."""
    rec, texts = answers_both("my 3060 12gb, can it run qwen2.5-14b awq with vllm")
    assert rec.verdict.no_context_bytes is None
    assert "at any context" not in texts["en"] and "上下文再短也装不下" not in texts["zh"]
