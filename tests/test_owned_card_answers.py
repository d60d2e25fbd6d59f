"""A card the user owns is never called over-provisioned, and a larger card that rents for
less is not a reason to call the named one too big."""

from __future__ import annotations

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def codes(line: str) -> set[str]:
    return {p.code for p in recommend_query(parse_query(line)).pitfalls}


def test_a_t4_owner_is_not_told_a_3090_is_cheaper() -> None:
    """Before: 'Over-provisioned: Tesla T4 is far more than this needs; GeForce RTX 3090 will
    do for less per hour' — to someone who owns the T4, about a larger card."""
    assert "overprovisioned" not in codes("qwen2.5-1.5b on my t4")
    assert "overprovisioned" not in codes("qwen2.5-0.5b on t4")  # the 3090 is no smaller
    parsed = parse_query("qwen2.5-1.5b on my t4")
    text = render(
        "answer", "en", rec=recommend_query(parsed), parsed=parsed, canonical="", plain=True
    )
    assert "✅ Fits (" in text and "Over-provisioned" not in text


def test_ownership_is_read_in_both_languages_and_only_with_a_card() -> None:
    assert parse_query("qwen2.5-7b on my 3090").owns_card
    assert parse_query("我的 4090 跑 qwen2.5-7b").owns_card
    assert parse_query("手上有张 3090 能跑 14b 吗").owns_card
    assert not parse_query("qwen2.5-7b on a100").owns_card
    assert not parse_query("my thesis needs qwen2.5-7b").owns_card  # no card named


def test_an_owned_a100_is_not_over_provisioned_but_a_rented_one_still_is() -> None:
    assert "overprovisioned" not in codes("qwen2.5-1.5b on my a100")
    assert "overprovisioned" in codes("qwen2.5-7b fp8 on a100")


def test_a_card_no_platform_rents_counts_as_owned() -> None:
    assert "overprovisioned" not in codes("qwen2.5-0.5b on 5080")
