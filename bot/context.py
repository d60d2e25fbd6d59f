"""The application class and the per-update `Context` the handlers receive.

Handlers import this module; it imports none of them (`bot.app` wires the handlers)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

from telegram import Update
from telegram.ext import Application, CallbackContext, ExtBot

from bot.inbox import Inbox
from bot.metrics import Metrics
from bot.persistence import SQLitePersistence
from bot.settings import Settings
from bot.storage import Repository

T = TypeVar("T")


class AdvisorApplication(Application):
    """PTB's Application with the bot's settings beside it, and the one instance of each
    cache or service the handlers share (`one`)."""

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.inbox: Inbox | None = None
        self.metrics: Metrics | None = None
        self._ones: dict[type, object] = {}

    def one(self, kind: type[T], make: Callable[[], T]) -> T:
        """The application's one `kind` (the inline cache, the Hub service…), made by `make`
        on first use."""
        if kind not in self._ones:
            self._ones[kind] = make()
        return cast(T, self._ones[kind])

    def made(self, kind: type[T]) -> T | None:
        """The application's `kind` if one was made (shutdown closes what exists)."""
        return cast("T | None", self._ones.get(kind))

    @property
    def repo(self) -> Repository:
        assert isinstance(self.persistence, SQLitePersistence)
        return self.persistence.repo


class Context(CallbackContext[ExtBot, dict, dict, dict]):
    """Per-update context: the reply language, settled once per update by `remember`; and
    whether the member picked their own machine in the wizard (`bot.lab` says so)."""

    def __init__(
        self, application: Application, chat_id: int | None = None, user_id: int | None = None
    ) -> None:
        super().__init__(application, chat_id, user_id)
        assert isinstance(application, AdvisorApplication)  # bot.app builds no other
        self.advisor = application
        self.lang: str = application.settings.default_language
        self.lab_chosen = False

    @property
    def repo(self) -> Repository:
        return self.advisor.repo

    @property
    def settings(self) -> Settings:
        return self.advisor.settings


_HAN = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def written_in(text: str | None, ours: bool = False) -> str | None:
    """ "zh" for text written in Chinese, else None. A question with two Han characters or
    more is Chinese ("3090 能跑 glm-4-9b 吗"; model and card names are Latin either way).
    The bot's own message under a pressed button (`ours`) is Chinese when Han characters
    are a quarter of its letters or more: an English answer names 矩池云 and stays English."""
    if not text:
        return None
    han = len(_HAN.findall(text))
    if not ours:
        return "zh" if han >= 2 else None
    latin = len(_LATIN.findall(text))
    return "zh" if han and han >= 0.25 * (han + latin) else None


def language_for(
    user_choice: str | None,
    chat_choice: str | None,
    tg_code: str | None,
    default: str,
    written: str | None = None,
) -> str:
    """The user's own /lang choice, else the language the question is written in (a Chinese
    question from a phone set to English is answered in Chinese: `written_in`), else the
    group's, else Telegram's language (zh* → zh, anything else → en), else the operator's
    default."""
    if user_choice in ("zh", "en"):
        return user_choice
    if written in ("zh", "en"):
        return written
    if chat_choice in ("zh", "en"):
        return chat_choice
    if tg_code:
        return "zh" if tg_code.lower().startswith("zh") else "en"
    return default


def is_anonymous_admin(update: Update) -> bool:
    """A group admin posting as the group: Telegram sends `from` = GroupAnonymousBot (a bot)
    and `sender_chat` = the group. A channel's post forwarded into its discussion group has
    `sender_chat` = the channel, and stays ignored."""
    msg, chat = update.effective_message, update.effective_chat
    return bool(msg and chat and msg.sender_chat and msg.sender_chat.id == chat.id)
