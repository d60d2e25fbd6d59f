"""SAM ViT-H on a 6 GB card, asked without a stack: segment-anything's own code (fp32, eager
attention: three score copies in a global block, 3 GiB) peaks above 5.6 GiB of tensors, as
the public OOM reports on 6 GB cards (segment-anything #33, #78, #351) say; the answer must
not say it runs."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

LINES = [
    ("sam vit-h inference on a gtx 1660 super 6gb, doable?", "en", "Runs, tight"),
    ("sam vit-h 推理 gtx 1660 super 6g 能跑吗", "zh", "能跑，但偏紧"),
]


@pytest.mark.parametrize(("line", "lang", "never"), LINES)
def test_sam_vit_h_does_not_fit_a_6gb_card(line: str, lang: str, never: str) -> None:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, plain=True)
    assert never not in text, text
    assert "SAM ViT-B" in text or "SAM ViT-L" in text, text  # a smaller encoder is offered
    assert rec.verdict is not None and rec.verdict.fix, rec.verdict
