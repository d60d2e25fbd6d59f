"""The table of serve / train_time / RL post-training lines (tests/data/kinds2_lines.toml):
each read as the kind of question it is, with the fields that answer it; every line that
reads is answered in both languages without an error."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from advisor.kinds import answer_kind
from advisor.memory import estimate
from advisor.models.choices import Kind
from advisor.parse import parse_query
from advisor.render import render

LINES = tomllib.loads((Path(__file__).parent / "data" / "kinds2_lines.toml").read_text())["line"]
FIELDS = {
    "policy": "policy_mode",
    "framework": "framework",
    "rollout": "rollout",
    "concurrency": "concurrency",
    "users": "users",
    "people": "users_are_people",
    "qps": "qps",
    "train_images": "train_images",
    "train_tokens": "train_tokens",
}


def _reading(text: str) -> dict:
    p = parse_query(text)
    out: dict = {"t": text, "kind": p.question_kind}
    if p.error is not None:
        out["error"] = p.error.detail
    w = p.workload
    if w is not None:
        out["mode"] = w.mode.value
        for key, field in FIELDS.items():
            value = getattr(w, field)
            if value not in (None, False):
                out[key] = getattr(value, "value", value)
        if w.num_gpus > 1:
            out["gpus"] = w.num_gpus
    return out


def test_the_table_holds_60_lines_in_both_languages_and_every_kind() -> None:
    assert len(LINES) >= 60
    chinese = [r for r in LINES if any("\u4e00" <= ch <= "\u9fff" for ch in r["t"])]
    assert 20 <= len(chinese) <= len(LINES) - 20
    kinds = {r["kind"] for r in LINES}
    assert {"serve", "train_time", "fit"} <= kinds
    methods = {r.get("mode") for r in LINES}
    assert {"grpo", "dpo", "ppo", "kto", "orpo", "simpo", "rloo"} <= methods


@pytest.mark.parametrize("row", LINES, ids=[r["t"][:60] for r in LINES])
def test_line_reads_as_meant(row: dict) -> None:
    assert _reading(row["t"]) == row


@pytest.mark.parametrize("row", [r for r in LINES if "error" not in r], ids=lambda r: r["t"][:60])
def test_line_is_answered_in_both_languages(row: dict) -> None:
    p = parse_query(row["t"])
    if row["kind"] in ("serve", "train_time"):
        result = answer_kind(p, "CNY")
        for lang in ("zh", "en"):
            text = render(row["kind"], lang, plain=True, result=result, parsed=p)
            assert 0 < len(text) <= 900, (lang, len(text))
    else:  # a fit answer (RL post-training: the estimate is the method's)
        assert p.workload is not None
        assert p.workload.mode.is_post_training or p.workload.kind != Kind.llm
        assert estimate(p.workload).estimate is not None
