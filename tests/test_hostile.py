"""Hostile input through the whole stack (hypothesis): random Unicode, control characters,
4096-character messages, HTML and SQL fragments, forged and stale callback data. Each gets
a clear answer or is ignored; no handler ever fails; other users keep being served."""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from telegram.ext import ApplicationBuilder

from bot.app import build_application
from bot.runner import start, stop
from standin import Chat, FakeTelegram, User
from tests.conftest import TOKEN, make_settings

FRAGMENTS = [
    "<b>",
    "</i>",
    "&amp;",
    "&",
    "<",
    "'; DROP TABLE history;--",
    "\x00",
    "\u202e",
    "🚀",
    "/vram",
    "@GpuAdvisorBot",
    "13b",
    "fp16",
    "显存",
    "\n",
    "x" * 300,
    "gpu:",
    "¥",
    "$",
    "k",
    "1e309",
]
# Telegram carries valid Unicode only: no lone surrogates (category Cs).
unicode = st.characters(blacklist_categories=("Cs",))
texts = st.one_of(
    st.text(alphabet=unicode, min_size=1, max_size=300),
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12).map(" ".join),
    st.text(alphabet=unicode, min_size=4000, max_size=4096),
)
prefixes = st.sampled_from(
    ["", "/vram ", "/vram@GpuAdvisorBot ", "/gpu ", "/fit ", "/gpus ", "/start ", "/lang "]
)
callback_data = st.one_of(
    st.text(alphabet=unicode, min_size=1, max_size=64).filter(lambda d: len(d.encode()) <= 64),
    st.builds(
        lambda k, i, a: f"{k}|{i}|{a}",
        st.sampled_from("wachlfz"),
        st.integers(-(10**15), 10**15),
        st.text(alphabet="tcsbxkn|0123456789abcdefgpmrduyz_.-", max_size=30),
    ),
)


class ErrorsSeen(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[asyncio.Runner, FakeTelegram, ErrorsSeen]]:
    """One stand-in and one bot for all examples (a fresh one per example would cost more
    than the examples)."""
    errors = ErrorsSeen()
    logging.getLogger("bot").addHandler(errors)
    with asyncio.Runner() as runner, tempfile.TemporaryDirectory() as tmp:
        tg = runner.run(FakeTelegram().start())
        app = build_application(
            ApplicationBuilder().token(TOKEN), make_settings(tg, Path(tmp) / "bot.sqlite3")
        )
        runner.run(start(app, poll_timeout=1))
        yield runner, tg, errors
        tg.release_pollers()
        runner.run(stop(app))
        runner.run(tg.stop())
    logging.getLogger("bot").removeHandler(errors)


async def _answered(tg: FakeTelegram, update: dict | None) -> None:
    if update is None:  # privacy mode hid it: ignored, which is allowed
        return
    cq = update.get("callback_query")
    if cq is not None:
        await tg.wait_for(
            lambda c: (
                c.method == "answerCallbackQuery" and c.params["callback_query_id"] == cq["id"]
            )
        )
    else:
        await tg.reply_to(update)


# Our commands (bot.commands.handlers and the wizard); anything else in a group is left alone.
OURS = {"start", "vram", "gpus", "gpu", "fit", "history", "lang", "help", "about", "forget"}
OURS |= {"stats", "cancel"}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(prefix=prefixes, text=texts, data=callback_data, in_group=st.booleans())
def test_hostile_input_gets_an_answer_or_is_ignored_never_a_failure(
    stack, prefix: str, text: str, data: str, in_group: bool
) -> None:
    runner, tg, errors = stack
    errors.records.clear()
    calls_before = len(tg.calls)
    user = User(7001, "<b>Mallory</b> & co", "en")
    chat = Chat(-107000, "supergroup", "<i>lab</i>") if in_group else None

    async def example() -> None:
        message = (prefix + text)[:4096]
        sent = tg.user_sends(user, chat, message)
        word = message.split(maxsplit=1)[0] if message.strip() else ""
        name, _, to = word.partition("@")
        if word.startswith("/") and (
            to not in ("", "GpuAdvisorBot") or chat and name[1:] not in OURS
        ):
            sent = None  # in a group an unknown bare command may be another bot's: ignored
        await _answered(tg, sent)
        answer = await tg.reply_to(
            tg.user_sends(user, text="/vram 7b")
        )  # keeps an answerable message around
        await _answered(tg, tg.user_clicks(user, answer.result, data))
        bystander = await tg.reply_to(tg.user_sends(User(7002, "Bo", "en"), text="/vram 13b fp16"))
        assert "VRAM per card" in bystander.result["text"]

    runner.run(example())
    assert not errors.records, [r.getMessage()[:300] for r in errors.records]
    rejected = [c for c in tg.calls[calls_before:] if c.error and "not modified" not in c.error]
    assert not rejected, rejected[-1]
