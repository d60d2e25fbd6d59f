"""Unsloth by release (data/training_stacks.toml [unsloth_release]): before 2024.4 its
gradient checkpoints stayed on the GPU (the offloading checkpointer came in 920f0ae,
2024-04-06), and before 2024.11 its Fast_CrossEntropyLoss saved the whole 16-bit logits and
wrote their gradient in place (Cut Cross-Entropy came in fa8e59e, 2024-11-17): 2 B a logit.
The release is read from a question as a source states it ("unsloth 2024.1")."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.stacks import stack_defaults, unsloth_before, unsloth_logit_bytes
from advisor.models.workload import Workload
from advisor.parse import canonical_query, parse_query
from advisor.render import assumption

GIB = 2**30


def _run(version: str | None):
    w = Workload(
        model="llama-3.1-8b",
        mode="qlora",
        weights_format="nf4",
        batch_size=2,
        seq_len=2048,
        gradient_checkpointing=True,
        framework="unsloth",
        unsloth_version=version,
    )
    return estimate(w)


def _term(r, name: str) -> int:
    return sum(t.bytes for t in r.estimate.terms if t.name == name)


def test_the_releases_are_the_commits_dates():
    row = stack_defaults()["unsloth_release"]
    assert row["offloaded_checkpoints_since"] == "2024.4"  # 920f0ae, 2024-04-06
    assert row["cut_cross_entropy_since"] == "2024.11"  # fa8e59e, 2024-11-17
    assert "2026-12-07" in row["source"] and "Fast_CrossEntropyLoss" in row["source"]
    assert unsloth_logit_bytes() == 2  # the 16-bit logits, gradient in place
    assert unsloth_before("2024.1", "offloaded_checkpoints")
    assert not unsloth_before("2024.4", "offloaded_checkpoints")
    assert unsloth_before("2024.10", "cut_cross_entropy")
    assert not unsloth_before("2024.11.3", "cut_cross_entropy")
    assert not unsloth_before(None, "cut_cross_entropy")


def test_an_old_release_holds_its_logits_and_checkpoints_on_the_card():
    today, aug_2024, jan_2024 = _run(None), _run("2024.8"), _run("2024.1")
    assert _term(today, "logits") == 0
    # 4096 tokens x 128256 vocab x 2 B = 0.98 GiB (a share of it at the step's peak)
    logits = _term(aug_2024, "logits")
    assert 0.8 * GIB < logits <= 4096 * 128256 * 2
    # the 16-bit layer inputs: 32 x 4096 tokens x 4096 x 2 B = 1 GiB on top
    extra = _term(jan_2024, "activations") - _term(aug_2024, "activations")
    assert 0.85 * GIB < extra <= 32 * 4096 * 4096 * 2
    assert "unsloth_checkpoints = on_card_before_offload" in jan_2024.assumptions
    assert "loss_path = unsloth_fast_ce" in aug_2024.assumptions
    assert "training_recipe = unsloth_release" in aug_2024.assumptions
    assert "training_recipe = unsloth" in today.assumptions


def test_the_release_is_read_from_a_question_and_kept_by_its_canonical_line():
    for text in ("unsloth 2024.1 qlora llama-2-7b", "unsloth==2024.1.3 qlora llama-2-7b"):
        p = parse_query(text)
        assert p.workload.unsloth_version == "2024.1"
        assert p.workload.framework == "unsloth"
        line = canonical_query(p)
        assert "unsloth 2024.1" in line
        assert parse_query(line).workload.unsloth_version == "2024.1"


def test_the_release_is_said_in_both_languages():
    for key, value in (
        ("loss_path", "unsloth_fast_ce"),
        ("unsloth_checkpoints", "on_card_before_offload"),
        ("training_recipe", "unsloth_release"),
    ):
        assert "Unsloth" in assumption("en", key, value)
        assert "「Unsloth」" in assumption("zh", key, value)


def test_the_case_adapter_reads_the_release_as_the_bot_does():
    from checks.note_numbers import _unsloth_release

    assert _unsloth_release("ran Unsloth 2024.8, transformers 4.44") == {
        "unsloth_version": "2024.8"
    }
    assert _unsloth_release("a draft post (January 2024): QLoRA") == {"unsloth_version": "2024.1"}
    assert _unsloth_release("no date") == {}
