"""Card and task words read beside numbers: "3050" is a card, not an image side; "full 128k
context" is the whole context window, not a full fine-tune."""

from __future__ import annotations

import pytest

from advisor.models import Mode
from advisor.parse import parse_query


@pytest.mark.parametrize(
    "question",
    [
        "sana 1600m 1024px 用diffusers 出图 3050 8g 够不够 要开offload吗",
        "sana 1600m 1024px with diffusers on an rtx 3050 8g, do I need offload?",
    ],
)
def test_a_3050_is_the_users_card_not_the_image_size(question) -> None:
    p = parse_query(question)
    assert p.workload.image_width in (None, 1024)
    assert p.vram_gib == 8.0
    assert any("RTX 3050" in a for a in p.assumed)


def test_a_bare_number_that_no_latent_model_takes_is_no_image_side() -> None:
    p = parse_query("sdxl 出图 3050")
    assert p.workload.image_width is None
