"""One module per kind of question (advisor/parse/question.py KINDS): each turns a parsed
question into its own result model, which the CLI prints as JSON under the kind's name and
the bot renders with templates/<lang>/<kind>.j2.

`fit` (what a workload needs) is answered by advisor.recommend as before. A kind without a
module here (`serve`, `train_time` until theirs land) is answered as `fit`: the parser still
builds its workload, so the answer is today's for the same line. To add a kind's answer:
write advisor/kinds/<kind>.py with `answer(parsed, currency) -> <Result>` (a pydantic model
with a `public_json()` method giving its public keys) and list it in `_ANSWERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from advisor.kinds import capability, compare, out_of_scope, purchase, serve, train_time
from advisor.parse import ParsedQuery

KindAnswer = Callable[[ParsedQuery, str], BaseModel]

_ANSWERS: dict[str, KindAnswer] = {
    "capability": capability.answer,
    "purchase": purchase.answer,
    "compare": compare.answer,
    "out_of_scope": out_of_scope.answer,
    "serve": serve.answer,
    "train_time": train_time.answer,
}


def answered_as(parsed: ParsedQuery) -> str:
    """The kind whose answer a question gets: its own where a module answers it, else `fit`
    (today's recommendation for the workload read)."""
    kind = parsed.question_kind
    if kind == "compare" and not compare.compares(parsed):
        return "fit"  # a comparison word with one thing named: that thing's answer
    return kind if kind in _ANSWERS else "fit"


def answer_kind(parsed: ParsedQuery, currency: str) -> BaseModel | None:
    """The kind's result, or None where the question is answered as `fit`."""
    kind = answered_as(parsed)
    return None if kind == "fit" else _ANSWERS[kind](parsed, currency)


def kind_json(parsed: ParsedQuery, result: BaseModel) -> dict[str, Any]:
    """The CLI's --json for a kind answered by its own module: `question_kind` and the
    kind's keys (each result's `public_json()`), with what was read and left over."""
    out: dict[str, Any] = {"question_kind": parsed.question_kind}
    out.update(result.public_json())  # type: ignore[attr-defined]
    if parsed.unknown_card is not None:  # named, never replaced: the answer says so
        out["unknown_card"] = parsed.unknown_card
    out["understood"], out["ignored"] = parsed.understood, parsed.ignored
    return out


__all__ = ["answer_kind", "answered_as", "kind_json"]
