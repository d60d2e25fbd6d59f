"""A reply goes out as one Telegram message where it can: the 4096 limit counts the visible
text (Bot API: "characters after entities parsing"), and in a group an answer that would
still not fit is shortened (no card table, no ℹ️ notes) instead of cut in two."""

from __future__ import annotations

import re

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.recommend.owned import judge_machines
from advisor.render import render
from bot.replies import split_message, visible_len
from checks.answer_questions import LABS
from standin import MAX_TEXT, Chat, FakeTelegram, User, utf16_len, visible_text
from tests.conftest import button, press, say, shown

# A long English answer: a named pair of too-small cards (the card table), three picks with
# notes, six pitfalls; with LABS[1]'s three machines before it, it passes 4096 characters.
LONG = "qwen2.5-32b int8 sglang batch 32 context 16k on 2x 4060 budget ¥200"
GROUP = Chat(-1005550077, "supergroup", "vision lab")
BOSS = User(5201, "Boss", "en")
MEMBER = User(5202, "Mia", "en")
AT = "@GpuAdvisorBot"


def test_the_limit_counts_the_visible_text_not_the_markup() -> None:
    line = '<b>node</b> <a href="https://example.com/a/long/link">x</a> &lt;ok&gt;\n'
    body = line * 120  # ~8000 characters of HTML, ~1300 shown
    assert utf16_len(body) > MAX_TEXT and visible_len(body) <= MAX_TEXT
    assert split_message(body) == [body]
    assert visible_len(body) == utf16_len(visible_text(body, "HTML"))
    longer = line * 400  # shown text past the limit: cut, each piece within it
    chunks = split_message(longer)
    assert len(chunks) == 2
    assert all(utf16_len(visible_text(c, "HTML")) <= MAX_TEXT for c in chunks)


def _full_and_compact() -> tuple[str, str, str]:
    parsed = parse_query(LONG)
    rec = recommend_query(parsed, default_currency="USD")
    own = judge_machines(parsed.workload, LABS[1])
    lab = render("lab_first", "en", own=own, group=True, chosen=False) + "\n\n"
    full = render("answer", "en", rec=rec, parsed=parsed, canonical=LONG)
    compact = render("answer", "en", rec=rec, parsed=parsed, canonical=LONG, compact=True)
    return lab, full, compact


def test_the_shortened_answer_keeps_every_warning_and_figure() -> None:
    lab, full, compact = _full_and_compact()
    assert visible_len(lab + full) > MAX_TEXT  # the case this is for
    assert visible_len(lab + compact) <= MAX_TEXT
    shown_full, shown_compact = visible_text(full, "HTML"), visible_text(compact, "HTML")
    kept = [ln.strip() for ln in shown_full.splitlines() if ln.strip().startswith(("⚠️", "⛔"))]
    assert kept and all(ln in shown_compact for ln in kept)
    dropped = [ln for ln in shown_full.splitlines() if ln.strip().startswith("ℹ️")]
    assert dropped and not any(ln in shown_compact for ln in dropped)
    # the headline, the picks and their prices are the same figures
    head = re.compile(r"~?\d+(?:\.\d+)? GiB per card|\$\d+\.\d+/h")
    assert head.findall(shown_full)[:6] == head.findall(shown_compact)[:6]
    assert "Shortened to fit one message" in shown_compact
    assert "Shortened" not in shown_full


async def test_in_a_group_a_long_answer_is_one_message(tg: FakeTelegram, bot) -> None:
    """The lab's machines before a long rental answer: the first reply is one short message
    (the machine to use, the verdict, the top pick), and the part with every machine and
    every pick, opened by its button, is one edited message too."""
    tg.admins.add(BOSS.id)
    for line in ("old 4x v100 32g", "t4box 2x t4", "p40 4x p40"):
        await say(tg, BOSS, f"/lab{AT} {line}", GROUP)
    start = len(tg.calls)
    answer = await say(tg, MEMBER, f"/vram{AT} {LONG}", GROUP)
    text = shown(answer)
    assert text.startswith("🏠 Our machines") and utf16_len(text) <= 900
    sends = [c for c in tg.calls[start:] if c.method == "sendMessage" and c.error is None]
    assert len(sends) == 1, [shown(c)[:60] for c in sends]
    start = len(tg.calls)
    picks = await press(tg, MEMBER, answer, "All picks")
    assert picks.method == "editMessageText" and "t4box" in shown(picks)
    assert utf16_len(shown(picks)) <= MAX_TEXT
    assert not [c for c in tg.calls[start:] if c.method == "sendMessage" and c.error is None]


async def test_in_a_private_chat_the_first_reply_is_one_short_message(
    tg: FakeTelegram, bot
) -> None:
    me = User(5203, "Solo", "en")
    start = len(tg.calls)
    answer = await say(tg, me, f"/vram {LONG}")
    sends = [c for c in tg.calls[start:] if c.method == "sendMessage" and c.error is None]
    assert len(sends) == 1 and utf16_len(shown(answer)) <= 900
    assert "Watch out" not in shown(answer)
    warned = await press(tg, me, answer, "Watch out")
    assert "ℹ️" in shown(warned) and "Shortened" not in shown(warned)


async def test_the_rest_of_an_answer_edited_in_place_quotes_that_answer(
    tg: FakeTelegram, bot, monkeypatch
) -> None:
    """A button that re-draws a long answer in place (here 🌐 All platforms) edits the
    message and sends the rest: that rest went out bare in a private chat, reading as a
    second answer to the press (the load bench counted it as a duplicate reply). Expected:
    it quotes the message it continues. (Messages are cut at 1500 visible characters here,
    so the picks need two after the press as the longest parts do at 4096.)"""
    import bot.replies as replies

    real = replies.split_message
    monkeypatch.setattr(replies, "split_message", lambda text: real(text, 1500))
    me = User(5204, "Solo", "en")
    last = await say(tg, me, f"/vram {LONG}")
    start = len(tg.calls)
    tg.user_clicks(me, last.result, button(last, "All platforms"))
    rest = await tg.wait_for(
        lambda c: c.seq >= start and c.method == "sendMessage" and c.error is None
    )
    edit = next(c for c in tg.calls[start:] if c.method == "editMessageText")
    assert int(edit.params["message_id"]) == last.result["message_id"]
    quoted = (rest.params.get("reply_parameters") or {}).get("message_id")
    assert quoted == last.result["message_id"], rest.params
