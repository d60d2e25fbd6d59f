"""A small card where only the CUDA context decides: the estimate charges the eager context
(1.25 GiB); PyTorch 2.1+ loads CUDA modules lazily (~0.5 GiB, advisor/data/cuda_context.toml).
Where only the lazy figure fits, the answer says "tight, only with a recent PyTorch" with the
figure, in both languages, and the headline, the grid and the notes agree."""

from __future__ import annotations

import dataclasses

from advisor.catalog import gpus
from advisor.models.choices import Runtime
from advisor.recommend.lazy_context import context_bytes, lazy_fit
from checks import answer_invariants as inv
from tests.conftest import answers_both
from tests.test_answer_invariants import problems_of

GEMMA_4060 = "unsloth qlora 微调 gemma-2-9b max_seq_length 2048 4060 8g 够吗"
BAICHUAN_1660TI = "baichuan2-7b-chat bnb 4bit 量化 推理 1660ti 6g 能跑吗"


def test_the_contexts_come_from_the_data_file() -> None:
    eager, lazy = context_bytes()
    assert (eager, lazy) == (int(1.25 * 2**30), int(0.5 * 2**30))


def test_qlora_on_an_8gb_card_is_tight_with_a_recent_pytorch_in_both_languages() -> None:
    """Was: "⚠️ cut the sequences to 512" (8.2 GiB needed, 7.9 usable); Unsloth's table
    gives ~6.5 GB for a 9B QLoRA: with the lazy context it is ~7.5 GiB, tight as asked."""
    rec, texts = answers_both(GEMMA_4060)
    v = rec.verdict
    assert v.state == "tight" and v.word == "tight" and v.fix is None
    assert v.lazy_context_bytes is not None
    assert v.lazy_context_bytes < rec.named.usable_bytes < rec.named.per_gpu_bytes
    assert not rec.fixes  # no change, no more cards: it runs as asked
    head_en = texts["en"].split("\n")[2]
    assert head_en.startswith("⚠️ Tight: fits only with a recent PyTorch (2.1+")
    assert "~0.5 GiB instead of ~1.25 GiB" in head_en and "7.5 GiB" in head_en
    head_zh = texts["zh"].split("\n")[2]
    assert head_zh.startswith("⚠️ 偏紧：只有较新的「PyTorch」（2.1+")
    assert "约 0.5 GiB，而不是约 1.25 GiB" in head_zh and "7.5 GiB" in head_zh
    for text in texts.values():
        assert "装不下（每卡" not in text and "Does not fit (" not in text
        assert "512" not in text.split("\n")[2]
    codes = {p.code for p in rec.pitfalls}
    assert "oom" not in codes and "oom_eager_context" in codes
    assert "CUDA_MODULE_LOADING" in texts["en"] and "「CUDA_MODULE_LOADING」" in texts["zh"]
    assert not problems_of(0, GEMMA_4060)


def test_a_job_the_lazy_context_does_not_save_stays_does_not_fit() -> None:
    """Baichuan2-7B NF4 at 4k on a 6 GB card: weights + KV alone are over the card, so the
    smaller context changes nothing: ❌, and the answer still holds every invariant."""
    rec, texts = answers_both(BAICHUAN_1660TI)
    assert rec.verdict.state == "no_fit" and rec.verdict.lazy_context_bytes is None
    assert "recent PyTorch" not in texts["en"] and "较新的「PyTorch」" not in texts["zh"]
    assert not problems_of(0, BAICHUAN_1660TI)
    for lang, text in texts.items():
        assert not inv.contradictions(text, lang)


def test_the_lazy_context_is_pytorchs_on_nvidia_only() -> None:
    """llama.cpp charges its own context, and a card without CUDA has no module loading."""
    rec, _ = answers_both(GEMMA_4060)
    est = rec.result.estimate
    cards = gpus()
    nvidia = next(g for g in cards.values() if g.vendor == "NVIDIA")
    other = next(g for g in cards.values() if g.vendor != "NVIDIA")
    need = est.total_bytes
    usable = need - 2**28  # over the card by 0.25 GiB: the lazy context saves 0.75
    assert lazy_fit(need, usable, est, nvidia) == need - (context_bytes()[0] - context_bytes()[1])
    assert lazy_fit(need, usable, est, other) is None
    assert lazy_fit(need, need * 2, est, nvidia) is None  # runs anyway: nothing to say
    for runtime in (Runtime.llamacpp, Runtime.vllm):  # its own context; its own share
        assert lazy_fit(need, usable, dataclasses.replace(est, runtime=runtime), nvidia) is None
