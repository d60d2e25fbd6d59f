"""The views under an answer, end to end: a button re-reads the stored canonical line, so
what the line said (the card is the user's own) must survive it, and each view reads as
lines (the header is not glued to the first bar)."""

from __future__ import annotations

from standin import FakeTelegram, User
from tests.conftest import press, say, shown


async def test_a_button_keeps_the_card_as_the_users_own(tg: FakeTelegram, bot) -> None:
    """Before: the canonical line dropped "my", so the ⚠️ view of "我的 h100 跑
    qwen2.5-1.5b" called the user's own H100 over-provisioned, as if it were rented."""
    wang = User(7301, "王", "zh-hans")
    first = await say(tg, wang, "我的 h100 跑 qwen2.5-1.5b")
    pitfalls = shown(await press(tg, wang, first, "注意事项"))
    assert "配置过度" not in pitfalls
    ann = User(7302, "Ann", "en")
    first = await say(tg, ann, "my h100 runs qwen2.5-1.5b")
    pitfalls = shown(await press(tg, ann, first, "Watch out"))
    assert "Over-provisioned" not in pitfalls and "over-provisioned" not in pitfalls
    # the rented H100 still is (the note is said where it belongs)
    bo = User(7303, "Bo", "en")
    first = await say(tg, bo, "qwen2.5-1.5b on an h100")
    assert "over-provisioned" in shown(await press(tg, bo, first, "Watch out")).lower()


async def test_the_breakdown_view_puts_the_first_bar_on_its_own_line(tg: FakeTelegram, bot) -> None:
    """Before: "… · 批大小 1█████████░ 🟦 模型权重 14.2 GiB"."""
    for user, line, label, weights in (
        (User(7304, "李", "zh-hans"), "我的 3090 跑 qwen2.5-7b", "显存构成", "模型权重"),
        (User(7305, "Ann", "en"), "qwen2.5-7b on my 3090", "Breakdown", "weights"),
    ):
        first = await say(tg, user, line)
        text = shown(await press(tg, user, first, label))
        lines = text.splitlines()
        header = lines[0]
        assert header.startswith("Qwen2.5 7B") and "█" not in header and "░" not in header
        bar = next(ln for ln in lines if weights in ln)
        assert bar.lstrip().startswith(("█", "░")), bar
