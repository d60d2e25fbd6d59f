"""Message filters for replies to the bot's own messages: a reply to one of its prompts (the
lab's "add a machine", the 📏 report prompt) or to one of its answers. In a group with
privacy mode on, such replies are what reach the bot besides commands."""

from __future__ import annotations

from collections.abc import Callable

from telegram import Message
from telegram.ext import filters


class ReplyToBot(filters.MessageFilter):
    """A reply to a message the bot itself sent, which `accepts` also holds for."""

    def __init__(self, accepts: Callable[[Message], bool]) -> None:
        super().__init__()
        self._accepts = accepts

    def filter(self, message: Message) -> bool:
        replied = message.reply_to_message
        return bool(
            replied is not None
            and replied.from_user is not None
            and replied.from_user.id == message.get_bot().id
            and self._accepts(replied)
        )


def reply_to_prompt(mark: str) -> ReplyToBot:
    """A reply to the bot's prompt that starts with `mark`."""
    return ReplyToBot(lambda replied: (replied.text or "").startswith(mark))
