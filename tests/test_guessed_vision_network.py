"""A vision network the catalog lacks: its activations are guessed from its size, and the
answer says so (not 'a Llama-like architecture') and widens its band."""

from __future__ import annotations

import pytest

from advisor.models.choices import Kind
from advisor.parse import parse_query


@pytest.mark.parametrize(
    ("lang", "said", "not_said"),
    [
        ("en", "guessed from its size (a fit over measured vision networks)", "Llama-like"),
        ("zh", "激活按参数量套用实测视觉网络的拟合估算", "类 Llama"),
    ],
)
def test_an_unnamed_vision_network_is_said_guessed_and_its_band_widened(
    lang: str, said: str, not_said: str
) -> None:
    from advisor.recommend import recommend_query
    from advisor.render import render

    line = "object detection training foodet-s 40M, batch 2, 1024x1024, on a 3090"
    parsed = parse_query(line)
    assert parsed.workload.kind == Kind.classic and parsed.workload.model is None
    rec = recommend_query(parsed, default_currency="USD")
    assert rec.result.estimate.band_basis.guessed_architecture
    text = render("details", lang, rec=rec, parsed=parsed, canonical=line, plain=True)
    assert said in text and not_said not in text
