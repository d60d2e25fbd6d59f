"""Fixtures: the Bot API stand-in on 127.0.0.1 and the real application, built by the
production factory, polling it. Each test gets its own SQLite file in a temporary folder."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from telegram.ext import ApplicationBuilder

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render
from bot.app import build_application
from bot.context import AdvisorApplication
from bot.runner import start, stop
from bot.settings import Settings
from standin import Call, Chat, FakeTelegram, User

TOKEN = "123456:test-token-for-the-stand-in-000000000"
ADMIN_ID = 4242


@pytest.fixture(autouse=True)
def no_real_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach the Hugging Face Hub: an unknown model's Hub search goes to a
    closed local port unless a test points HF_ENDPOINT at the stand-in Hub."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_TOKEN", raising=False)


@pytest.fixture(autouse=True)
def fresh_memos() -> None:
    """Each test starts with empty engine memos (advisor.memo): a test that patches the
    catalog, the prices or the engine must see its own answers, not an earlier test's."""
    from advisor import memo

    memo.clear_all()


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


def plain_answer(q: str, lang: str) -> str:
    """The whole answer to a question as the bot renders it (details view, plain text), in
    the currency a user of that language sees by default."""
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, canonical=q, view="full", plain=True)


def answers_both(q: str):  # noqa: ANN201
    """The recommendation (in yuan) and its short answer in both languages (plain text),
    for tests that judge one reply's verdict and its wording in zh and en together."""
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY")
    texts = {
        lang: render("answer", lang, rec=rec, parsed=parsed, canonical=q, plain=True)
        for lang in ("en", "zh")
    }
    return rec, texts


def make_settings(tg: FakeTelegram, db: Path, **overrides: object) -> Settings:
    values: dict = {
        "telegram_api_base_url": tg.base_url,
        "database_path": db,
        "default_language": "en",
        "admin_user_ids": str(ADMIN_ID),
        # Telegram's per-group cap (20/min) would make a group test wait a minute.
        "rate_limit_group_per_min": 10_000,
        "rate_limit_overall_per_s": 10_000,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
def settings(tg: FakeTelegram, tmp_path: Path) -> Settings:
    return make_settings(tg, tmp_path / "bot.sqlite3")


async def launch(settings: Settings) -> AdvisorApplication:
    app = build_application(ApplicationBuilder().token(TOKEN), settings)
    await start(app, poll_timeout=1)
    return app


async def halt(tg: FakeTelegram, app: AdvisorApplication) -> None:
    """Stop the application without waiting out its current long poll."""
    tg.release_pollers()
    try:
        await stop(app)
    finally:
        tg.release_pollers(False)


@pytest.fixture
async def bot(tg: FakeTelegram, settings: Settings) -> AsyncIterator[AdvisorApplication]:
    app = await launch(settings)
    yield app
    await halt(tg, app)


# --- small helpers shared by the end-to-end tests ---


async def say(
    tg: FakeTelegram, user: User, text: str, chat: Chat | None = None, **kw: object
) -> Call:
    return await tg.reply_to(tg.user_sends(user, chat, text, **kw))  # type: ignore[arg-type]


# The Hub's "looking up …" placeholder starts with it (templates/*/hub_looking.j2)
LOOKING_UP = "🔎"


async def answer_to(tg: FakeTelegram, sent: dict | None, timeout: float = 20.0) -> Call:
    """The answer to `sent`, a line that may need the Hub: its first reply, or, where that
    is the 🔎 placeholder, what follows it in the chat: the placeholder edited into the
    answer, or the wizard's next step (which deletes the placeholder). The bot shows the
    placeholder whenever a lookup takes longer than bot.hub.LOOKING_UP_AFTER_S, which any
    lookup may on a busy machine: a test of the answer waits for the answer."""
    first = await tg.reply_to(sent, timeout=timeout)
    if not shown(first).startswith(LOOKING_UP):
        return first
    chat = str(first.params["chat_id"])
    return await tg.wait_for(
        lambda c: (
            c.method in ("sendMessage", "editMessageText")
            and c.error is None
            and str(c.params.get("chat_id")) == chat
            and isinstance(c.result, dict)
            and not shown(c).startswith(LOOKING_UP)
        ),
        timeout=timeout,
        since=tg.calls.index(first) + 1,
        chat=chat,
    )


async def ask(
    tg: FakeTelegram, user: User, text: str, chat: Chat | None = None, timeout: float = 20.0
) -> Call:
    """`say` for a line that may need the Hub (`answer_to`)."""
    return await answer_to(tg, tg.user_sends(user, chat, text), timeout)


def buttons(call: Call) -> list[tuple[str, str]]:
    markup = call.params.get("reply_markup") or {}
    return [
        (b["text"], b["callback_data"]) for row in markup.get("inline_keyboard", []) for b in row
    ]


def button(call: Call, label: str) -> str:
    for text, data in buttons(call):
        if label in text:
            return data
    raise AssertionError(f"no button {label!r} in {[t for t, _ in buttons(call)]}")


async def press(tg: FakeTelegram, user: User, call: Call, label: str) -> Call:
    return await tg.reply_to(tg.user_clicks(user, call.result, button(call, label)))


def shown(call: Call) -> str:
    """The text as Telegram shows it (tags parsed away by the stand-in)."""
    return call.result["text"]


async def settled(app: AdvisorApplication) -> None:
    """Wait until the bot has finished every update: a reply can reach the chat before its
    update is done (the answer's history row is written while the reply goes out)."""
    await app.update_processor.idle()  # type: ignore[attr-defined]


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]], what: str, timeout: float = 20.0
) -> None:
    """Return once `condition()` holds (tried every 20 ms), or fail saying `what` never
    happened. A wait on the outcome itself: a fixed sleep passes or fails with the speed
    of the machine (too short on a busy one; on a fast one, a "nothing more came" check
    after it proves nothing)."""
    deadline = time.monotonic() + timeout
    while True:
        held = condition()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        assert time.monotonic() < deadline, f"timed out after {timeout} s: {what}"
        await asyncio.sleep(0.02)
