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

from __future__ import annotations

import asyncio
import contextlib
import html
import itertools
import json
import random
import re
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import aiohttp
from aiohttp import web

BOT_USER = {"id": 7000001, "is_bot": True, "first_name": "GPU Advisor", "username": "GpuAdvisorBot"}
ANONYMOUS_ADMIN_ID = 1087968824  # Telegram's GroupAnonymousBot
MAX_TEXT = 4096
MAX_CALLBACK_BYTES = 64
MAX_INLINE_RESULTS = 50
START_PARAMETER = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a deep link's start parameter
ALLOWED_TAGS = {
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "span",
    "tg-spoiler",
    "a",
    "code",
    "pre",
    "blockquote",
    "tg-emoji",
}


class TelegramHTMLError(ValueError):
    pass


class _HTMLChecker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            raise TelegramHTMLError(f'Can\'t parse entities: unsupported start tag "{tag}"')
        if tag == "a" and not dict(attrs).get("href"):
            raise TelegramHTMLError("Can't parse entities: a tag without href")
        if tag == "span" and dict(attrs).get("class") != "tg-spoiler":
            raise TelegramHTMLError("Can't parse entities: span without tg-spoiler class")
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            raise TelegramHTMLError(f'Can\'t parse entities: unexpected end tag "{tag}"')
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text Telegram would show, or TelegramHTMLError where Telegram answers 400."""
    if parse_mode != "HTML":
        return text
    bad_amp = re.search(r"&(?!(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);)", text)
    if bad_amp:
        raise TelegramHTMLError(
            f"Can't parse entities: bad entity at byte offset {bad_amp.start()}"
        )
    bad_lt = re.search(r"<(?!/?[a-zA-Z][\w-]*(?:\s[^<>]*)?>)", text)
    if bad_lt:
        raise TelegramHTMLError(
            f"Can't parse entities: unexpected < at byte offset {bad_lt.start()}"
        )
    checker = _HTMLChecker()
    checker.feed(text)
    checker.close()
    if checker.stack:
        raise TelegramHTMLError(f'Can\'t parse entities: unclosed tag "{checker.stack[-1]}"')
    return html.unescape("".join(checker.text))


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    result: Any = None
    error: str | None = None
    at: float = 0.0
    seq: int = 0  # position in FakeTelegram.calls


@dataclass
class Chat:
    id: int
    type: str = "private"
    title: str | None = None
    is_forum: bool = False

    def json(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.title:
            d["title"] = self.title
        if self.is_forum:
            d["is_forum"] = True
        return d


@dataclass
class User:
    id: int
    first_name: str = "User"
    language_code: str | None = "en"
    username: str | None = None

    def json(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.language_code:
            d["language_code"] = self.language_code
        if self.username:
            d["username"] = self.username
        return d


@dataclass
class FaultPlan:
    """Random faults for the load bench: each probability per call of the named methods."""

    p_429: float = 0.0
    p_5xx: float = 0.0
    p_drop: float = 0.0
    p_slow: float = 0.0
    slow_s: float = 0.5
    retry_after: int = 1
    methods: tuple[str, ...] = ("sendMessage", "editMessageText", "getUpdates")
    seed: int = 7
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)


@dataclass
class _Fault:
    method: str
    status: int
    description: str
    parameters: dict | None
    drop: bool
    delay_s: float
    remaining: int


class FakeTelegram:
    def __init__(self, *, privacy_mode: bool = True, bot_user: dict | None = None) -> None:
        self.bot_user = dict(bot_user or BOT_USER)
        self.privacy_mode = privacy_mode
        self.calls: list[Call] = []
        self.updates: list[dict] = []
        self.commands: dict[tuple[str, str], list[dict]] = {}
        self.messages: dict[tuple[int, int], dict] = {}
        self.blocked_users: set[int] = set()
        self.admins: set[int] = set()  # getChatMember answers "creator" for these, else "member"
        self._inline_ids = itertools.count(1)
        self._inline_pending: set[str] = set()  # inline queries sent, not yet answered
        self._answered: set[str] = set()
        # Telegram refuses an answer to a button press older than about 15 s; None: never.
        self.callback_answer_window_s: float | None = None
        self._pressed_at: dict[str, float] = {}
        self.migrated_chats: dict[int, int] = {}
        self.faults: list[_Fault] = []
        self.fault_plan: FaultPlan | None = None
        self.injected: dict[str, int] = {}
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1)
        self._callback_ids = itertools.count(1)
        self._new_update = asyncio.Event()
        self.releasing = False  # while True, getUpdates answers at once (lets a poller stop fast)
        self.valid_token: str | None = None  # when set, any other token gets 401 like Telegram
        self._poll_seq = 0
        self.conflicts = 0  # getUpdates answered 409 because another poller came
        self._polled = asyncio.Event()  # set when a bot asks for updates
        self._waiters: list[tuple[Any, asyncio.Future]] = []
        self._runner: web.AppRunner | None = None
        self.port = 0
        # Webhook mode (setWebhook): updates are POSTed to the bot, as Telegram does, each
        # sent again until it is answered 200; getUpdates is refused meanwhile.
        self.webhook: dict[str, Any] | None = None
        self.webhook_answers: list[int] = []  # HTTP status of every delivery attempt
        self._in_flight: set[int] = set()
        self._deliverer: asyncio.Task | None = None
        self._deliveries: set[asyncio.Task] = set()
        self._session: aiohttp.ClientSession | None = None

    # --- server life -------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    async def start(self, port: int = 0) -> FakeTelegram:
        app = web.Application(client_max_size=8 * 2**20)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        # a stand-in told to hang (fail_next delay_s) must not hold up its own stop
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        server = site._server  # noqa: SLF001 - aiohttp exposes the bound port only here
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        self._stop_webhook()
        for task in list(self._deliveries):
            task.cancel()
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._runner:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- what a user does ------------------------------------------------------------------

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

    # --- what tests read -------------------------------------------------------------------

    def sent(self, method: str | None = None, chat_id: int | None = None) -> list[Call]:
        return [
            c
            for c in self.calls
            if (method is None or c.method == method)
            and (chat_id is None or str(c.params.get("chat_id")) == str(chat_id))
        ]

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> Call:
        """The first recorded call (past or future) for which predicate(call) is true."""
        for c in self.calls:
            if predicate(c):
                return c
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, fut))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._waiters = [(p, f) for p, f in self._waiters if f is not fut]

    async def reply_to(
        self, update: dict | None, timeout: float = 5.0, method: str | None = None
    ) -> Call:
        """The first successful answer to `update`: in a group, a message quoting it; for a
        button, an edit of that message or a new message in its chat."""
        assert update is not None, "the update was not delivered (privacy mode?)"
        start = len(self.calls)
        cq = update.get("callback_query")
        msg = update.get("message") or cq["message"]
        chat_id = str(msg["chat"]["id"])
        methods = (method,) if method else ("sendMessage", "editMessageText")

        def match(c: Call) -> bool:
            # "not modified": the bot did answer, with what the message already shows
            unchanged = c.error is not None and "not modified" in c.error
            if (
                c.error is not None
                and not unchanged
                or c.method not in methods
                or str(c.params.get("chat_id")) != chat_id
            ):
                return False
            if c.method == "editMessageText":  # an answer to a button edits that button's message
                return cq is not None and int(c.params["message_id"]) == msg["message_id"]
            quoted = (c.params.get("reply_parameters") or {}).get("message_id")
            return quoted is None or int(quoted) == msg["message_id"]

        for c in self.calls[start:]:
            if match(c):
                return c
        return await self.wait_for(lambda c: c.seq >= start and match(c), timeout)

    def fail_next(
        self,
        method: str,
        status: int = 500,
        description: str = "Internal Server Error",
        *,
        retry_after: int | None = None,
        drop: bool = False,
        delay_s: float = 0.0,
        count: int = 1,
    ) -> None:
        params = {"retry_after": retry_after} if retry_after is not None else None
        self.faults.append(_Fault(method, status, description, params, drop, delay_s, count))

    # --- the HTTP side -------------------------------------------------------------------

    async def _params(self, request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            return dict(await request.json())
        form = await request.post()
        out: dict[str, Any] = {}
        for k, v in form.items():
            out[k] = v if isinstance(v, str) else "<file>"
        # PTB JSON-encodes every non-string value of a form; decode the ones we read.
        for k in (
            "reply_markup",
            "commands",
            "scope",
            "reply_parameters",
            "link_preview_options",
            "allowed_updates",
            "show_alert",
            "disable_notification",
            "drop_pending_updates",
            "results",
            "button",
            "is_personal",
        ):
            if isinstance(out.get(k), str):
                out[k] = json.loads(out[k])
        return out

    def _ok(self, result: Any) -> web.Response:
        return web.json_response({"ok": True, "result": result})

    def _err(self, status: int, description: str, parameters: dict | None = None) -> web.Response:
        body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
        if parameters:
            body["parameters"] = parameters
        return web.json_response(body, status=status)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        if self.valid_token is not None and request.match_info["token"] != self.valid_token:
            return self._err(401, "Unauthorized")
        params = await self._params(request)
        injected = await self._inject(method, request, params)
        if injected is not None:
            if injected.status != 499:  # a dropped connection was recorded as "dropped"
                self._record(
                    Call(
                        method, params, error=f"injected {injected.status}", at=time.perf_counter()
                    )
                )
            return injected
        if method == "getUpdates":
            try:
                return self._ok(await self._get_updates(params))
            except _ApiError as exc:
                return self._err(exc.status, exc.description, exc.parameters)
        call = Call(method, params, at=time.perf_counter())
        try:
            call.result = self._dispatch(method, params)
        except _ApiError as exc:
            call.error = exc.description
            if "not modified" in exc.description:  # the message stays as the user sees it
                call.result = self.messages.get((int(params["chat_id"]), int(params["message_id"])))
            self._record(call)
            return self._err(exc.status, exc.description, exc.parameters)
        self._record(call)
        return self._ok(call.result)

    def _record(self, call: Call) -> None:
        call.seq = len(self.calls)
        self.calls.append(call)
        for predicate, fut in list(self._waiters):
            if not fut.done() and predicate(call):
                fut.set_result(call)

    async def _inject(
        self, method: str, request: web.Request, params: dict
    ) -> web.StreamResponse | None:
        fault = next((f for f in self.faults if f.method == method and f.remaining > 0), None)
        plan = self.fault_plan
        if fault is None and plan is not None and method in plan.methods:
            r = plan.rng.random()
            edges = itertools.accumulate((plan.p_429, plan.p_5xx, plan.p_drop, plan.p_slow))
            kind = next(
                (
                    k
                    for k, edge in zip(("429", "5xx", "drop", "slow"), edges, strict=True)
                    if r < edge
                ),
                None,
            )
            if kind == "429":
                fault = _Fault(
                    method,
                    429,
                    "Too Many Requests: retry after 1",
                    {"retry_after": plan.retry_after},
                    False,
                    0.0,
                    1,
                )
            elif kind == "5xx":
                fault = _Fault(
                    method, plan.rng.choice((500, 502)), "Bad Gateway", None, False, 0.0, 1
                )
            elif kind == "drop":
                fault = _Fault(method, 0, "", None, True, 0.0, 1)
            elif kind == "slow":
                fault = _Fault(method, 0, "", None, False, plan.slow_s, 1)
        if fault is None:
            return None
        fault.remaining -= 1
        self.faults = [f for f in self.faults if f.remaining > 0]
        key = "drop" if fault.drop else ("slow" if fault.status == 0 else str(fault.status))
        self.injected[key] = self.injected.get(key, 0) + 1
        if fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        if fault.drop:
            self._record(Call(method, params, error="dropped", at=time.perf_counter()))
            if request.transport is not None:
                request.transport.abort()  # the client sees the connection die mid-request
            return web.Response(status=499)  # never arrives; keeps aiohttp's log quiet
        if fault.status == 0:
            return None  # slow only: answer normally, late
        return self._err(fault.status, fault.description, fault.parameters)

    async def _get_updates(self, params: dict) -> list[dict]:
        """Long polling as Telegram does it, including its answer to two pollers: a new
        getUpdates ends the one still waiting with 409 Conflict."""
        if self.webhook is not None:
            raise _ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        self._polled.set()
        self._poll_seq += 1
        mine = self._poll_seq
        self._new_update.set()  # wakes a poller still waiting, which then sees it is superseded
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        if offset:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        deadline = time.monotonic() + timeout
        while not self.updates and time.monotonic() < deadline and not self.releasing:
            self._new_update.clear()
            try:
                await asyncio.wait_for(self._new_update.wait(), deadline - time.monotonic())
            except TimeoutError:
                break
            if self._poll_seq != mine:
                self.conflicts += 1
                raise _ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only "
                    "one bot instance is running",
                )
        return [{k: v for k, v in u.items() if not k.startswith("_")} for u in self.updates[:limit]]

    def _chat_for(self, params: dict) -> int:
        chat_id = int(params["chat_id"])
        if chat_id in self.migrated_chats:
            raise _ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": self.migrated_chats[chat_id]},
            )
        if chat_id in self.blocked_users:
            raise _ApiError(403, "Forbidden: bot was blocked by the user")
        return chat_id

    def _check_text(self, params: dict) -> str:
        text = params.get("text")
        if not text:
            raise _ApiError(400, "Bad Request: message text is empty")
        try:
            shown = visible_text(text, params.get("parse_mode"))
        except TelegramHTMLError as exc:
            raise _ApiError(400, f"Bad Request: {exc}") from None
        if not shown.strip():
            raise _ApiError(400, "Bad Request: message text is empty")
        if utf16_len(shown) > MAX_TEXT:
            raise _ApiError(400, "Bad Request: message is too long")
        markup = params.get("reply_markup")
        if isinstance(markup, dict):
            for row in markup.get("inline_keyboard", []):
                for button in row:
                    data = button.get("callback_data")
                    if data is not None and not 1 <= len(data.encode()) <= MAX_CALLBACK_BYTES:
                        raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
                    if not button.get("text"):
                        raise _ApiError(400, "Bad Request: button text is empty")
        return shown

    def _dispatch(self, method: str, p: dict) -> Any:
        if method == "getMe":
            return self.bot_user
        if method == "answerCallbackQuery":  # Telegram takes one answer per query, in time
            window = self.callback_answer_window_s
            pressed = self._pressed_at.get(p["callback_query_id"], time.monotonic())
            if p["callback_query_id"] in self._answered or (
                window is not None and time.monotonic() - pressed > window
            ):
                raise _ApiError(
                    400,
                    "Bad Request: query is too old and response timeout expired or query ID is invalid",
                )
            self._answered.add(p["callback_query_id"])
            return True
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
        if method in ("editMessageText", "editMessageReplyMarkup"):
            chat_id = self._chat_for(p)
            key = (chat_id, int(p["message_id"]))
            old = self.messages.get(key)
            if old is None:
                raise _ApiError(400, "Bad Request: message to edit not found")
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
                raise _ApiError(
                    400,
                    "Bad Request: message is not modified: specified new message "
                    "content and reply markup are exactly the same",
                )
            self.messages[key] = new
            return new
        if method == "getChatMember":
            user = {"id": int(p["user_id"]), "is_bot": False, "first_name": "Member"}
            if int(p["user_id"]) in self.admins:
                return {"status": "creator", "user": user, "is_anonymous": False}
            return {"status": "member", "user": user}
        if method == "getChatAdministrators":
            self._chat_for(p)
            return [
                {
                    "status": "creator",
                    "user": {"id": uid, "is_bot": False, "first_name": "Admin"},
                    "is_anonymous": False,
                }
                for uid in sorted(self.admins)
            ]
        if method == "answerInlineQuery":
            return self._answer_inline(p)
        if method == "deleteMessage":
            self._chat_for(p)
            return self.messages.pop((int(p["chat_id"]), int(p["message_id"])), None) is not None
        # A 404 would surface in PTB as a misleading InvalidToken (research B.4).
        raise _ApiError(400, f"Bad Request: the stand-in lacks method {method}")

    def _answer_inline(self, p: dict) -> bool:
        """What Telegram checks of an inline answer (core.telegram.org/bots/api#answerinlinequery):
        a known query answered once, at most 50 results with unique ids of 1–64 bytes, an
        article's title and message text (Telegram HTML, 4096 characters), cache_time, and
        deep-link start parameters of 1–64 characters [A-Za-z0-9_-]."""
        query_id = str(p.get("inline_query_id"))
        if query_id not in self._inline_pending:
            raise _ApiError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        results = p.get("results")
        if not isinstance(results, list) or len(results) > MAX_INLINE_RESULTS:
            raise _ApiError(400, "Bad Request: RESULTS_TOO_MUCH")
        ids = [str(r.get("id", "")) for r in results]
        if len(set(ids)) != len(ids) or any(not 1 <= len(i.encode()) <= 64 for i in ids):
            raise _ApiError(400, "Bad Request: RESULT_ID_INVALID")
        for r in results:
            if r.get("type") == "article" and not r.get("title"):
                raise _ApiError(400, "Bad Request: RESULT_TITLE_EMPTY")
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
            raise _ApiError(400, "Bad Request: CACHE_TIME_INVALID")
        button = p.get("button")
        if (
            isinstance(button, dict)
            and "start_parameter" in button
            and not (button.get("text") and START_PARAMETER.fullmatch(button["start_parameter"]))
        ):
            raise _ApiError(400, "Bad Request: START_PARAM_INVALID")
        self._inline_pending.discard(query_id)
        return True

    def _check_start_link(self, url: str | None) -> None:
        prefix = f"https://t.me/{self.bot_user['username']}?start="
        if url and url.startswith(prefix) and not START_PARAMETER.fullmatch(url[len(prefix) :]):
            raise _ApiError(400, "Bad Request: START_PARAM_INVALID")

    # --- webhook mode -------------------------------------------------------------------

    def _set_webhook(self, p: dict) -> None:
        url = str(p.get("url") or "")
        if not url:
            self._stop_webhook()
            return
        if p.get("drop_pending_updates") in (True, "true", "True"):
            self.updates.clear()
        self._stop_webhook()
        self.webhook = {
            "url": url,
            "secret_token": p.get("secret_token"),
            "max_connections": int(p.get("max_connections") or 40),
        }
        self._deliverer = asyncio.ensure_future(self._deliver_loop())

    def _stop_webhook(self) -> None:
        self.webhook = None
        if self._deliverer is not None:
            self._deliverer.cancel()
            self._deliverer = None

    async def post_update(self, update: dict, secret: str | None) -> int:
        """POST one update to the webhook as Telegram would, with `secret` in the header
        (None: no header, as from a stranger who found the URL). Returns the HTTP status."""
        assert self.webhook is not None, "no webhook set"
        headers = {} if secret is None else {"X-Telegram-Bot-Api-Secret-Token": secret}
        body = {k: v for k, v in update.items() if not k.startswith("_")}
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(
                self.webhook["url"], json=body, headers=headers, timeout=aiohttp.ClientTimeout(10)
            ) as response:
                await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError):
            status = 0  # no answer: the bot is down
        self.webhook_answers.append(status)
        return status

    async def _deliver_loop(self) -> None:
        """Every pending update is POSTed, up to max_connections at once; it leaves the
        queue only on a 200 answer, else it is sent again (Telegram's retries)."""
        assert self.webhook is not None
        slots = asyncio.Semaphore(self.webhook["max_connections"])
        while self.webhook is not None:
            self._new_update.clear()
            for update in list(self.updates):
                if update["update_id"] in self._in_flight:
                    continue
                await slots.acquire()
                self._in_flight.add(update["update_id"])
                task = asyncio.ensure_future(self._deliver_one(update, slots))
                self._deliveries.add(task)
                task.add_done_callback(self._deliveries.discard)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_update.wait(), 0.2)

    async def _deliver_one(self, update: dict, slots: asyncio.Semaphore) -> None:
        try:
            secret = self.webhook["secret_token"] if self.webhook else None
            if await self.post_update(update, secret) == 200 and update in self.updates:
                self.updates.remove(update)
                self._new_update.set()  # a slot is free
        finally:
            self._in_flight.discard(update["update_id"])
            slots.release()


class _ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


STANDIN_TOKEN = "123456:stand-in-token-not-a-real-one-0000000"


async def spawn_bot(
    base_url: str, database_path: str, log_path: str | None = None, **env: str
) -> asyncio.subprocess.Process:
    """`python -m bot` as a separate process talking to a stand-in (crash tests, load bench).
    Telegram's rate caps are lifted: a stand-in has none, and the bench measures our stack."""
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "DATABASE_", "ADMIN_", "RATE_"))
    }
    full.update(
        {
            "PYTHONPATH": str(root),
            "TELEGRAM_BOT_TOKEN": STANDIN_TOKEN,
            "TELEGRAM_API_BASE_URL": base_url,
            "DATABASE_PATH": database_path,
            "LOG_LEVEL": "WARNING",
            "DEFAULT_LANGUAGE": "en",
            "RATE_LIMIT_OVERALL_PER_S": "100000",
            "RATE_LIMIT_GROUP_PER_MIN": "1000000",
        }
    )
    full.update(env)
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115 - the child keeps it
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            cwd=str(root),
            env=full,
            stdout=log or asyncio.subprocess.DEVNULL,
            stderr=log or asyncio.subprocess.DEVNULL,
        )
    finally:
        if log:
            log.close()
