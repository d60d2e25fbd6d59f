"""A language model fine-tuned as a classifier (data/training_stacks.toml [classifier_head]):
LlamaForSequenceClassification runs the base model and a Linear(hidden, num_labels) score
head, so the loss sees a few labels a token, never tokens x vocab logits. Read alike from a
question and from a case's notes; said in both languages."""

from __future__ import annotations

import re

from advisor.memory import estimate
from advisor.memory.stacks import stack_defaults
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.render import assumption
from checks.note_knobs import NOTE_KNOBS


def _run(**extra: object):
    w = Workload(
        model="llama-3.2-1b",
        mode="lora",
        weights_format="fp32",
        batch_size=16,
        seq_len=256,
        gradient_checkpointing=False,
        **extra,
    )
    return estimate(w)


def _terms(r) -> dict:
    return {t.name: t.bytes for t in r.estimate.terms}


def test_the_source_row_is_what_the_rule_reads():
    row = stack_defaults()["classifier_head"]
    assert row["logit_bytes_per_token"] == 0
    assert "LlamaForSequenceClassification" in row["source"] and "2026-12-07" in row["source"]


def test_a_classifier_drops_the_vocabulary_logits_and_says_so():
    lm, clf = _run(), _run(classifier_head=True)
    vocab_logits = 16 * 256 * 128256  # tokens x Llama 3.2's vocabulary
    assert _terms(lm)["logits"] >= vocab_logits * 12
    assert _terms(clf).get("logits", 0) == 0
    assert {a.field: a.value for a in clf.assumed}["loss_path"] == "classifier_head"
    # everything else is the same run
    rest = {k: v for k, v in _terms(lm).items() if k not in ("logits", "runtime_overhead")}
    assert rest == {k: v for k, v in _terms(clf).items() if k in rest}


def test_the_question_and_the_case_notes_read_it_alike():
    for q in (
        "llama-3.2-1b lora fp32 sequence classification batch 16 seq 256 a10",
        "用 llama-3.2-1b 做文本分类 lora 训练 a10",
        "AutoModelForSequenceClassification llama-3.2-1b lora",
    ):
        parsed = parse_query(q)
        assert parsed.workload is not None and parsed.workload.classifier_head, q
        assert not parsed.ignored, q
    pattern = next(p for p, field, _ in NOTE_KNOBS if field == "classifier_head")
    assert re.search(pattern, "AutoModel.from_pretrained (the base model without its LM head)")
    assert re.search(pattern, "LlamaForSequenceClassification, 2 labels")
    assert not re.search(pattern, "LlamaForCausalLM with its LM head")


def test_the_assumption_is_said_in_both_languages():
    en = assumption("en", "loss_path", "classifier_head")
    zh = assumption("zh", "loss_path", "classifier_head")
    assert "classification head" in en and "logits" in en
    assert "分类头" in zh and "logits" in zh
    assert "classifier_head" not in en + zh
