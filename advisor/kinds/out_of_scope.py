"""A greeting or a question outside the trade ("你好", "今天天气怎么样"): one short reply in
the user's language with three example questions (the wording is the template's,
templates/<lang>/out_of_scope.j2)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor.parse import ParsedQuery


class OutOfScopeAnswer(BaseModel):
    greeting: bool  # "你好" / "hi": greeted back; else "that is not something I answer"

    def public_json(self) -> dict[str, Any]:
        return {"out_of_scope": {"greeting": self.greeting}}


def answer(parsed: ParsedQuery, currency: str) -> OutOfScopeAnswer:
    # a greeting word read; "帮我订一张机票" reads a count ("一张") and is no greeting
    return OutOfScopeAnswer(greeting="greeting" in parsed.cues)
