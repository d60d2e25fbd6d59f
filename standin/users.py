"""What a user does in the stand-in's Telegram: sends a message or media, presses a button,
asks inline, migrates a group, removes the bot. Methods of `FakeTelegram` (its state lives
there), kept apart by what they do."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from standin.model import ANONYMOUS_ADMIN_ID, Chat, User


class UserActions:
    def _push(self, update: dict) -> dict:
        update["update_id"] = next(self._update_ids)
        update["_pushed_at"] = time.perf_counter()
        self.updates.append(update)
        self._new_update.set()
        return update

    def _delivered_in_group(self, text: str, reply_to: dict | None) -> bool:
        """Privacy mode (core.telegram.org/bots/features#privacy-mode): commands, and replies
        to the bot's own messages. Unqualified commands are delivered (an approximation:
        real Telegram delivers them only if this bot spoke last)."""
        if not self.privacy_mode:
            return True
        if reply_to and reply_to.get("from", {}).get("id") == self.bot_user["id"]:
            return True
        m = re.match(r"/\w+(@(\w+))?", text)
        return bool(m) and (
            m.group(2) is None or m.group(2).lower() == self.bot_user["username"].lower()
        )

    def user_sends(
        self,
        user: User,
        chat: Chat | None = None,
        text: str = "",
        *,
        reply_to: dict | None = None,
        thread_id: int | None = None,
    ) -> dict | None:
        """Queue a message; returns the update, or None where privacy mode hides it."""
        chat = chat or Chat(id=user.id, type="private")
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat.json(),
            "from": user.json(),
            "text": text,
        }
        m = re.match(r"/\w+(@\w+)?", text)
        if m:
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": m.end()}]
        if reply_to:
            message["reply_to_message"] = reply_to
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if chat.type != "private" and not self._delivered_in_group(text, reply_to):
            return None
        return self._push({"message": message})

    def group_migrates(self, user: User, chat: Chat, new_chat_id: int) -> dict:
        """A group upgraded to a supergroup: the service message, and 400 on the old id."""
        self.migrated_chats[chat.id] = new_chat_id
        return self._push(
            {
                "message": {
                    "message_id": next(self._message_ids),
                    "date": int(time.time()),
                    "chat": chat.json(),
                    "from": user.json(),
                    "migrate_to_chat_id": new_chat_id,
                }
            }
        )

    def supergroup_created_from(self, user: User, new_chat: Chat, old_chat_id: int) -> dict:
        """The other half of a migration: the first message in the new supergroup, which
        Telegram may deliver before or after the old group's migrate_to message."""
        return self._push(
            {
                "message": {
                    "message_id": next(self._message_ids),
                    "date": int(time.time()),
                    "chat": new_chat.json(),
                    "from": user.json(),
                    "migrate_from_chat_id": old_chat_id,
                }
            }
        )

    def anonymous_admin_sends(self, chat: Chat, text: str) -> dict | None:
        """A group admin posting "as the group": `from` is Telegram's GroupAnonymousBot and
        `sender_chat` the group itself."""
        update = self.user_sends(User(ANONYMOUS_ADMIN_ID, "Group", None), chat, text)
        if update is not None:
            update["message"]["from"].update(is_bot=True, username="GroupAnonymousBot")
            update["message"]["sender_chat"] = chat.json()
        return update

    def user_sends_media(self, user: User, kind: str) -> dict:
        """A sticker, photo, voice note… in a private chat: no text at all."""
        media = {
            "sticker": {
                "file_id": "s1",
                "file_unique_id": "s1",
                "width": 512,
                "height": 512,
                "is_animated": False,
                "is_video": False,
                "type": "regular",
            },
            "photo": [{"file_id": "p1", "file_unique_id": "p1", "width": 90, "height": 90}],
            "voice": {"file_id": "v1", "file_unique_id": "v1", "duration": 2},
        }[kind]
        return self._push(
            {
                "message": {
                    "message_id": next(self._message_ids),
                    "date": int(time.time()),
                    "chat": Chat(user.id).json(),
                    "from": user.json(),
                    kind: media,
                }
            }
        )

    def user_clicks(self, user: User, message: dict, data: str) -> dict:
        """Press an inline button of a bot message (as returned by sendMessage)."""
        query_id = str(next(self._callback_ids))
        self._pressed_at[query_id] = time.monotonic()
        return self._push(
            {
                "callback_query": {
                    "id": query_id,
                    "from": user.json(),
                    "chat_instance": f"ci{message['chat']['id']}",
                    "data": data,
                    "message": self.messages.get(
                        (message["chat"]["id"], message["message_id"]), message
                    ),
                }
            }
        )

    def user_inline_query(self, user: User, query: str, chat_type: str = "sender") -> dict:
        """ "@Bot 13b fp16" typed in any chat: an inline_query update (no chat id, only the
        kind of chat it was typed in)."""
        query_id = f"iq{next(self._inline_ids)}"
        self._inline_pending.add(query_id)
        return self._push(
            {
                "inline_query": {
                    "id": query_id,
                    "from": user.json(),
                    "query": query,
                    "offset": "",
                    "chat_type": chat_type,
                }
            }
        )

    def bot_removed(self, user: User, chat: Chat, *, kicked: bool = True) -> dict:
        """A member removes the bot from a group: a my_chat_member update."""
        bot = dict(self.bot_user)
        return self._push(
            {
                "my_chat_member": {
                    "chat": chat.json(),
                    "from": user.json(),
                    "date": int(time.time()),
                    "old_chat_member": {"status": "member", "user": bot},
                    "new_chat_member": (
                        {"status": "kicked", "user": bot, "until_date": 0}
                        if kicked
                        else {"status": "left", "user": bot}
                    ),
                }
            }
        )

    async def wait_polling(self, timeout: float = 30.0) -> None:
        """Until a bot asks for updates (a bot process has started)."""
        self._polled.clear()
        await asyncio.wait_for(self._polled.wait(), timeout)

    def release_pollers(self, on: bool = True) -> None:
        """Answer pending and future long polls at once (before stopping a bot), or stop doing so."""
        self.releasing = on
        self._new_update.set()
