"""A local stand-in of the Telegram Bot API on 127.0.0.1, for tests, `python -m bot --local`
and `bench/load.py`.

It speaks the wire format PTB uses: form-encoded requests (non-string values JSON-encoded),
`{"ok": …, "result": …}` answers, long-polled `getUpdates` with offsets. It enforces what
real Telegram enforces and a fake usually forgets: Telegram's HTML subset, 4096 characters
of visible text, 64-byte callback data, "message is not modified", privacy mode in groups.
Faults can be injected per call (`fail_next`) or at random (`FaultPlan`): 429 with
retry_after, 5xx, dropped connections, slow answers, a user who blocked the bot, a group
migrated to a supergroup.

Facts from ../shared/research/telegram-bot-conventions.md (B.4) and core.telegram.org/bots/api.
"""

from standin.model import (
    ANONYMOUS_ADMIN_ID,
    BOT_USER,
    Call,
    Chat,
    FaultPlan,
    User,
)
from standin.rules import (
    MAX_CALLBACK_BYTES,
    MAX_INLINE_RESULTS,
    MAX_TEXT,
    TelegramHTMLError,
    utf16_len,
    visible_text,
)
from standin.server import FakeTelegram
from standin.spawn import STANDIN_TOKEN, spawn_bot

__all__ = [
    "ANONYMOUS_ADMIN_ID",
    "BOT_USER",
    "MAX_CALLBACK_BYTES",
    "MAX_INLINE_RESULTS",
    "MAX_TEXT",
    "STANDIN_TOKEN",
    "Call",
    "Chat",
    "FakeTelegram",
    "FaultPlan",
    "TelegramHTMLError",
    "User",
    "spawn_bot",
    "utf16_len",
    "visible_text",
]
