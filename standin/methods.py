"""The Bot API methods the stand-in answers (sendMessage, editMessageText,
answerCallbackQuery, answerInlineQuery, getChatMember…), each checked as Telegram checks it.
Methods of `FakeTelegram` (its state lives there), kept apart by what they do."""

from __future__ import annotations

import time
from typing import Any

from standin.model import ApiError
from standin.rules import (
    MAX_CAPTION,
    MAX_INLINE_RESULTS,
    MAX_PHOTO_BYTES,
    START_PARAMETER,
    TelegramHTMLError,
    png_size,
    utf16_len,
    visible_text,
)


class BotMethods:
    def _dispatch(self, method: str, p: dict) -> Any:
        if method == "getMe":
            return self.bot_user
        if method == "answerCallbackQuery":  # Telegram takes one answer per query, in time
            return self._answer_callback(p)
        if method == "setWebhook":
            self._set_webhook(p)
            return True
        if method == "deleteWebhook":
            self._stop_webhook()
            return True
        if method == "getWebhookInfo":
            return {
                "url": self.webhook["url"] if self.webhook else "",
                "has_custom_certificate": False,
                "pending_update_count": len(self.updates),
            }
        if method in (
            "setMyDescription",
            "setMyShortDescription",
            "sendChatAction",
            "answerCallbackQuery",
            "close",
        ):
            if method == "sendChatAction":
                self._chat_for(p)
            return True
        if method == "setMyCommands":
            scope = (p.get("scope") or {"type": "default"})["type"]
            self.commands[(scope, p.get("language_code", ""))] = p["commands"]
            return True
        if method == "deleteMyCommands":
            scope = (p.get("scope") or {"type": "default"})["type"]
            self.commands.pop((scope, p.get("language_code", "")), None)
            return True
        if method == "getMyCommands":
            scope = (p.get("scope") or {"type": "default"})["type"]
            return self.commands.get((scope, p.get("language_code", "")), [])
        if method == "sendMessage":
            return self._send_message(p)
        if method == "sendPhoto":
            return self._send_photo(p)
        if method in ("editMessageText", "editMessageReplyMarkup"):
            return self._edit_message(method, p)
        if method == "getChatMember":
            user = {"id": int(p["user_id"]), "is_bot": False, "first_name": "Member"}
            if int(p["user_id"]) in self.admins:
                return {"status": "creator", "user": user, "is_anonymous": False}
            return {"status": "member", "user": user}
        if method == "getChatAdministrators":
            return self._chat_administrators(p)
        if method == "answerInlineQuery":
            return self._answer_inline(p)
        if method == "deleteMessage":
            self._chat_for(p)
            return self.messages.pop((int(p["chat_id"]), int(p["message_id"])), None) is not None
        # A 404 would surface in PTB as a misleading InvalidToken (research B.4).
        raise ApiError(400, f"Bad Request: the stand-in lacks method {method}")

    def _answer_callback(self, p: dict) -> bool:
        """answerCallbackQuery: one answer per query, within the window after the press."""
        window = self.callback_answer_window_s
        pressed = self._pressed_at.get(p["callback_query_id"], time.monotonic())
        if p["callback_query_id"] in self._answered or (
            window is not None and time.monotonic() - pressed > window
        ):
            raise ApiError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        self._answered.add(p["callback_query_id"])
        return True

    def _send_message(self, p: dict) -> dict:
        """sendMessage: the text checked as Telegram checks it, stored as the chat's message."""
        chat_id = self._chat_for(p)
        shown = self._check_text(p)
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": self.bot_user,
            "text": shown,
        }
        if p.get("message_thread_id"):
            msg["message_thread_id"] = int(p["message_thread_id"])
            msg["is_topic_message"] = True
        markup = p.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            msg["reply_markup"] = markup
        self.messages[(chat_id, msg["message_id"])] = msg
        return msg

    def _edit_message(self, method: str, p: dict) -> dict:
        """editMessageText / editMessageReplyMarkup: refused, as Telegram refuses it, for a
        message that is gone or an edit that changes nothing."""
        chat_id = self._chat_for(p)
        key = (chat_id, int(p["message_id"]))
        old = self.messages.get(key)
        if old is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        new = dict(old)
        if method == "editMessageText":
            new["text"] = self._check_text(p)
        markup = p.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            new["reply_markup"] = markup
        else:
            new.pop("reply_markup", None)
        if new.get("text") == old.get("text") and new.get("reply_markup") == old.get(
            "reply_markup"
        ):
            raise ApiError(
                400,
                "Bad Request: message is not modified: specified new message "
                "content and reply markup are exactly the same",
            )
        self.messages[key] = new
        return new

    def _chat_administrators(self, p: dict) -> list[dict]:
        """getChatAdministrators: the chat's admins, each its creator."""
        self._chat_for(p)
        return [
            {
                "status": "creator",
                "user": {"id": uid, "is_bot": False, "first_name": "Admin"},
                "is_anonymous": False,
            }
            for uid in sorted(self.admins)
        ]

    def _send_photo(self, p: dict) -> dict:
        """A photo uploaded with the request (multipart `photo`), as Telegram takes one: at
        most 10 MB, width + height at most 10000, a caption of at most 1024 characters. The
        bytes stay in the call's params (`_files`) for a test to open."""
        chat_id = self._chat_for(p)
        data = (p.get("_files") or {}).get("photo")
        if data is None:
            raise ApiError(400, "Bad Request: there is no photo in the request")
        if len(data) > MAX_PHOTO_BYTES:
            raise ApiError(400, "Bad Request: PHOTO_INVALID_DIMENSIONS")
        try:
            width, height = png_size(data)
        except ValueError:
            raise ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED") from None
        if width + height > 10000 or min(width, height) * 20 < max(width, height):
            raise ApiError(400, "Bad Request: PHOTO_INVALID_DIMENSIONS")
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": self.bot_user,
            "photo": [
                {
                    "file_id": f"photo-{chat_id}-{len(self.messages)}",
                    "file_unique_id": f"u{len(self.messages)}",
                    "width": width,
                    "height": height,
                    "file_size": len(data),
                }
            ],
        }
        caption = p.get("caption")
        if caption:
            try:
                shown = visible_text(caption, p.get("parse_mode"))
            except TelegramHTMLError as exc:
                raise ApiError(400, f"Bad Request: {exc}") from None
            if utf16_len(shown) > MAX_CAPTION:
                raise ApiError(400, "Bad Request: message caption is too long")
            msg["caption"] = shown
        if p.get("message_thread_id"):
            msg["message_thread_id"] = int(p["message_thread_id"])
        self.messages[(chat_id, msg["message_id"])] = msg
        return msg

    def _answer_inline(self, p: dict) -> bool:
        """What Telegram checks of an inline answer (core.telegram.org/bots/api#answerinlinequery):
        a known query answered once, at most 50 results with unique ids of 1–64 bytes, an
        article's title and message text (Telegram HTML, 4096 characters), cache_time, and
        deep-link start parameters of 1–64 characters [A-Za-z0-9_-]."""
        query_id = str(p.get("inline_query_id"))
        if query_id not in self._inline_pending:
            raise ApiError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        results = p.get("results")
        if not isinstance(results, list) or len(results) > MAX_INLINE_RESULTS:
            raise ApiError(400, "Bad Request: RESULTS_TOO_MUCH")
        ids = [str(r.get("id", "")) for r in results]
        if len(set(ids)) != len(ids) or any(not 1 <= len(i.encode()) <= 64 for i in ids):
            raise ApiError(400, "Bad Request: RESULT_ID_INVALID")
        for r in results:
            if r.get("type") == "article" and not r.get("title"):
                raise ApiError(400, "Bad Request: RESULT_TITLE_EMPTY")
            content = r.get("input_message_content") or {}
            if "message_text" in content:
                self._check_text(
                    {"text": content["message_text"], "parse_mode": content.get("parse_mode")}
                )
            for row in (r.get("reply_markup") or {}).get("inline_keyboard", []):
                for button in row:
                    self._check_start_link(button.get("url"))
        cache_time = p.get("cache_time")
        if cache_time is not None and int(cache_time) < 0:
            raise ApiError(400, "Bad Request: CACHE_TIME_INVALID")
        button = p.get("button")
        if (
            isinstance(button, dict)
            and "start_parameter" in button
            and not (button.get("text") and START_PARAMETER.fullmatch(button["start_parameter"]))
        ):
            raise ApiError(400, "Bad Request: START_PARAM_INVALID")
        self._inline_pending.discard(query_id)
        return True

    def _check_start_link(self, url: str | None) -> None:
        prefix = f"https://t.me/{self.bot_user['username']}?start="
        if url and url.startswith(prefix) and not START_PARAMETER.fullmatch(url[len(prefix) :]):
            raise ApiError(400, "Bad Request: START_PARAM_INVALID")
