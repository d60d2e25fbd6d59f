"""Qwen2-VL under transformers (data/models/vision_language.toml; data/runtimes.toml
[transformers] family_release, family_last_token_logits_since, logits_upcast_until): its
config.json names transformers 4.45, whose Qwen2VLForConditionalGeneration.forward ran
lm_head over every prompt token and upcast to fp32 (16-bit + fp32 copy, 6 B an entry);
4.46 to 4.53 kept them in 16 bits (2 B); from 4.54 its forward takes logits_to_keep and
generate() computes the last token's only. Qwen's own table (Qwen2-VL README, transformers,
A100) gives 20.07 GB for the 7B AWQ at 14,336 input tokens; a generic 7B read 9.6 GiB."""

from __future__ import annotations

import re

from advisor.memory import estimate
from advisor.models.workload import Workload
from tests.conftest import answers_both

VOCAB = 152064
Q = "qwen2-vl-7b-instruct-awq 用transformers推理 输入14k token 4070 12g 够吗"


def _activations(**kw) -> int:
    w = Workload(model="qwen2-vl-7b", weights_format="awq-4bit", runtime="transformers", **kw)
    return sum(t.bytes for t in estimate(w).estimate.terms if t.name == "activations")


def test_qwen2_vl_is_in_the_catalog_with_its_config():
    for size, name in (("2b", "Qwen2-VL 2B"), ("7b", "Qwen2-VL 7B"), ("72b", "Qwen2-VL 72B")):
        est = estimate(Workload(model=f"qwen2-vl-{size}-instruct", weights_format="bf16"))
        assert est.model.name == name
    arch = estimate(Workload(model="qwen2-vl-7b", weights_format="bf16")).model.arch
    assert (arch.layers, arch.hidden, arch.kv_heads, arch.vocab) == (28, 3584, 4, VOCAB)


def test_the_logits_follow_the_release():
    """14,336 prompt tokens, 2,048 new: the prefill's logits are 6 B an entry at 4.45 (the
    release assumed when none is named), 2 B from 4.46, the last token's only from 4.54."""
    kw = {"prompt_tokens": 14336, "new_tokens": 2048}
    assumed = _activations(**kw)
    assert assumed == _activations(transformers_version="4.45", **kw)
    assert assumed > 14336 * VOCAB * 6 * 0.95
    sixteen = _activations(transformers_version="4.50", **kw)
    assert 14336 * VOCAB * 2 * 0.9 < sixteen < 14336 * VOCAB * 2 * 1.1
    assert _activations(transformers_version="4.56", **kw) < sixteen * 0.6


def test_qwen2_5_vl_keeps_todays_release_when_none_is_named():
    w = Workload(model="qwen2.5-vl-7b", weights_format="bf16", prompt_tokens=14336)
    named = w.model_copy(update={"transformers_version": "4.56"})
    assert estimate(w).estimate.total_bytes == estimate(named).estimate.total_bytes


def _gib(text: str) -> float:
    return float(re.search(r"(\d+\.\d) GiB", text).group(1))  # type: ignore[union-attr]


def test_the_answer_says_it_does_not_fit_and_names_the_release():
    """The review question: over the 4070's 12 GB as Qwen measured it, in both languages,
    saying which release it assumed and from which release the logits shrink."""
    _, texts = answers_both(Q)
    for lang, text in texts.items():
        head = text.splitlines()[1]
        assert _gib(head) > 18, (lang, head)
        assert "4.45" in text and "4.54" in text, lang
    assert "config.json" in texts["zh"] and "config.json" in texts["en"]


def test_a_named_release_is_read_and_answered():
    _, new = answers_both(Q.replace("用transformers", "用transformers 4.56"))
    _, old = answers_both(Q.replace("用transformers", "用transformers==4.45.0"))
    for lang in ("zh", "en"):
        assert _gib(new[lang].splitlines()[1]) < 11, lang
        assert _gib(old[lang].splitlines()[1]) > 18, lang
        assert "4.54" not in new[lang], lang
