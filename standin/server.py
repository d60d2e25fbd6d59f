"""The stand-in's HTTP server: its life, the calls it recorded (what tests read), faults,
and the request handling that answers every method in Telegram's wire format."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import aiohttp
from aiohttp import web

from standin.methods import BotMethods
from standin.model import BOT_USER, ApiError, Call, Fault, FaultPlan
from standin.rules import (
    MAX_CALLBACK_BYTES,
    MAX_TEXT,
    TelegramHTMLError,
    utf16_len,
    visible_text,
)
from standin.users import UserActions
from standin.webhook import WebhookDelivery


class FakeTelegram(UserActions, BotMethods, WebhookDelivery):
    def __init__(
        self, *, privacy_mode: bool = True, bot_user: dict | None = None, first_id: int = 1
    ) -> None:
        """`first_id`: where update and message ids start (a later run on the same database
        starts past the ids the last one used, as Telegram's keep growing)."""
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
        self.faults: list[Fault] = []
        self.fault_plan: FaultPlan | None = None
        self.injected: dict[str, int] = {}
        self._update_ids = itertools.count(first_id)
        self._message_ids = itertools.count(first_id)
        self._callback_ids = itertools.count(1)
        self._new_update = asyncio.Event()
        self.releasing = False  # while True, getUpdates answers at once (lets a poller stop fast)
        self.valid_token: str | None = None  # when set, any other token gets 401 like Telegram
        self._poll_seq = 0
        self.conflicts = 0  # getUpdates answered 409 because another poller came
        self._polled = asyncio.Event()  # set when a bot asks for updates
        # waiters by the chat their call must be in (None: any call); a recorded call is
        # shown only to its chat's waiters and the unkeyed ones: with 200 simulated users
        # each waiting for its own reply, testing every waiter on every call was most of
        # bench/load.py's own CPU
        self._waiters: dict[str | None, list[tuple[Any, asyncio.Future]]] = {}
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

    # --- what tests read -------------------------------------------------------------------

    def sent(self, method: str | None = None, chat_id: int | None = None) -> list[Call]:
        return [
            c
            for c in self.calls
            if (method is None or c.method == method)
            and (chat_id is None or str(c.params.get("chat_id")) == str(chat_id))
        ]

    async def wait_for(
        self, predicate: Any, timeout: float = 5.0, *, since: int = 0, chat: str | None = None
    ) -> Call:
        """The first recorded call (past or future) for which predicate(call) is true.
        `since`: only calls from that position in `calls` on; `chat`: only calls whose
        chat_id is that (as a string) are tried."""
        for c in self.calls[since:]:
            if predicate(c):
                return c
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        waiters = self._waiters.setdefault(chat, [])
        waiters.append((predicate, fut))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            waiters.remove((predicate, fut))
            if not waiters and self._waiters.get(chat) is waiters:
                del self._waiters[chat]

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
        return await self.wait_for(match, timeout, since=start, chat=chat_id)

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
        self.faults.append(Fault(method, status, description, params, drop, delay_s, count))

    # --- the HTTP side -------------------------------------------------------------------

    async def _params(self, request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            return dict(await request.json())
        form = await request.post()
        out: dict[str, Any] = {}
        for k, v in form.items():
            out[k] = v if isinstance(v, str) else "<file>"
            if not isinstance(v, str):  # an upload (sendPhoto): its bytes, for tests to open
                out.setdefault("_files", {})[k] = v.file.read()
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
            except ApiError as exc:
                return self._err(exc.status, exc.description, exc.parameters)
        call = Call(method, params, at=time.perf_counter())
        try:
            call.result = self._dispatch(method, params)
        except ApiError as exc:
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
        chat = call.params.get("chat_id") if isinstance(call.params, dict) else None
        for key in (None,) if chat is None else (None, str(chat)):
            for predicate, fut in list(self._waiters.get(key, ())):
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
                fault = Fault(
                    method,
                    429,
                    "Too Many Requests: retry after 1",
                    {"retry_after": plan.retry_after},
                    False,
                    0.0,
                    1,
                )
            elif kind == "5xx":
                fault = Fault(
                    method, plan.rng.choice((500, 502)), "Bad Gateway", None, False, 0.0, 1
                )
            elif kind == "drop":
                fault = Fault(method, 0, "", None, True, 0.0, 1)
            elif kind == "slow":
                fault = Fault(method, 0, "", None, False, plan.slow_s, 1)
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
            raise ApiError(
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
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only "
                    "one bot instance is running",
                )
        return [{k: v for k, v in u.items() if not k.startswith("_")} for u in self.updates[:limit]]

    def _chat_for(self, params: dict) -> int:
        chat_id = int(params["chat_id"])
        if chat_id in self.migrated_chats:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": self.migrated_chats[chat_id]},
            )
        if chat_id in self.blocked_users:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        return chat_id

    def _check_text(self, params: dict) -> str:
        text = params.get("text")
        if not text:
            raise ApiError(400, "Bad Request: message text is empty")
        try:
            shown = visible_text(text, params.get("parse_mode"))
        except TelegramHTMLError as exc:
            raise ApiError(400, f"Bad Request: {exc}") from None
        if not shown.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(shown) > MAX_TEXT:
            raise ApiError(400, "Bad Request: message is too long")
        markup = params.get("reply_markup")
        if isinstance(markup, dict):
            for row in markup.get("inline_keyboard", []):
                for button in row:
                    data = button.get("callback_data")
                    if data is not None and not 1 <= len(data.encode()) <= MAX_CALLBACK_BYTES:
                        raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
                    if not button.get("text"):
                        raise ApiError(400, "Bad Request: button text is empty")
        return shown
