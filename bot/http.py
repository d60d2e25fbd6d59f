"""PTB's HTTP transport: aiohttp's client, or the bot's lean HTTP/1.1 client
(bot.http_client, on httptools) with HTTP_CLIENT=lean; never httpx.

Why: the load bench showed the HTTP client was most of the bot's CPU per update. httpx
cost the most; aiohttp (already a dependency for the Bot API stand-in, with a C HTTP
parser) less; bot.http_client ~1/4 of aiohttp's per request (bench/api_cost.py), ~17% of
the bot's CPU per update in bench/load.py. aiohttp stays the default: a well-kept client
that has met every HTTP server and network there is; the lean one is young and knows only
what bot.http_client says it does, for an operator who needs the CPU. PTB
supports this through `BaseRequest`: we only move bytes; PTB still builds the requests and
maps status codes and `parameters` (retry_after, migrate_to_chat_id) to its exceptions.
Requests are JSON bodies (orjson), else form-encoded as with httpx. The bot sends no files,
so multipart uploads are refused rather than carried untested.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple
from urllib.parse import urlencode

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

try:
    import orjson
except ImportError:  # pragma: no cover - exercised by tests/test_event_loop.py
    orjson = None  # type: ignore[assignment]

try:
    from bot import http_client
except ImportError:  # pragma: no cover - httptools missing: exercised by tests/test_http_client.py
    http_client = None  # type: ignore[assignment]

try:
    from telegram._utils.defaultvalue import DefaultValue
except ImportError:  # pragma: no cover - PTB moved it
    DefaultValue = type(BaseRequest.DEFAULT_NONE)  # type: ignore[misc,assignment]


FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}
JSON_HEADERS = {"Content-Type": "application/json"}


def encode_body(request_data: RequestData | None) -> tuple[bytes | None, dict[str, str] | None]:
    """A request's parameters as a JSON body (the Bot API takes application/json as well as
    a form) when orjson is installed: one orjson call, where a form costs the standard
    library's json.dumps of every keyboard and quote_plus of every byte of the text, both
    pure Python (~5% of the bot's CPU in the load bench, long Chinese answers the most).
    The form, as PTB's own transport sends it, when orjson is missing."""
    if request_data is None:
        return None, None
    if orjson is not None:
        params = request_data.parameters
        if not params:
            return None, None
        try:
            return orjson.dumps(params), JSON_HEADERS
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate, which a form cannot
            # carry either (quote_plus encodes strict UTF-8); ASCII JSON escapes it
            return json.dumps(params).encode(), JSON_HEADERS
    form = request_data.json_parameters
    if not form:
        return None, None
    # The form aiohttp would build from the dict, encoded here: its FormData makes a
    # multipart writer (a uuid4 boundary from os.urandom) for every request even when it
    # then sends it url-encoded, ~2% of the bot's CPU in the load bench.
    return urlencode(list(form.items()), doseq=True).encode(), FORM_HEADERS


CLIENTS = ("lean", "aiohttp")
Headers = dict[str, str] | None


class Timeouts(NamedTuple):
    """One request's limits in seconds (None: none), PTB's defaults filled in."""

    read: float | None
    write: float | None
    connect: float | None
    pool: float | None


class ApiRequest(BaseRequest):
    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 3.0,
        on_response: Callable[[bytes], Awaitable[None]] | None = None,
        client: str | None = None,
    ) -> None:
        """`on_response` sees every 200 answer's body before PTB does (the inbox uses it).
        `client`: "aiohttp" (the default) or "lean" (bot.http_client, needs httptools)."""
        client = client or "aiohttp"
        if client not in CLIENTS or (client == "lean" and http_client is None):
            raise ValueError(f"no such HTTP client here: {client!r}")
        self.client = client
        self._lean: http_client.Client | None = None
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._session: aiohttp.ClientSession | None = None
        self._on_response = on_response

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self.client == "lean":
            if self._lean is None:
                self._lean = http_client.Client(self._pool_size, self.USER_AGENT)
            return
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size, enable_cleanup_closed=True)
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.USER_AGENT}
            )

    async def shutdown(self) -> None:
        if self._lean is not None:
            await self._lean.close()
            self._lean = None
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    @staticmethod
    def parse_json_payload(payload: bytes) -> dict[str, Any]:
        """PTB's hook for a faster JSON library: orjson (a dependency, Rust, several times
        the standard library's speed on Bot API answers) when installed. Anything orjson
        refuses (invalid UTF-8, NaN, integers past 64 bits) goes to PTB's own parser, which
        decides as it always did."""
        if orjson is not None:
            try:
                return orjson.loads(payload)
            except ValueError:
                pass
        return BaseRequest.parse_json_payload(payload)

    @staticmethod
    def _pick(value: object, default: float | None) -> float | None:
        return default if isinstance(value, DefaultValue) else value  # type: ignore[return-value]

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        limits = Timeouts(
            read=self._pick(read_timeout, self._read_timeout),
            write=self._pick(write_timeout, self._write_timeout),
            connect=self._pick(connect_timeout, self._connect_timeout),
            pool=self._pick(pool_timeout, self._pool_timeout),
        )
        if request_data is not None and request_data.contains_files:
            raise NetworkError("the bot's transport does not upload files")
        data, headers = encode_body(request_data)
        send = self._lean_request if self._lean is not None else self._aiohttp_request
        status, body = await send(url, method, data, headers, limits)
        if status == 200 and self._on_response is not None:
            await self._on_response(body)
        return status, body

    async def _lean_request(
        self, url: str, method: str, data: bytes | None, headers: Headers, limits: Timeouts
    ) -> tuple[int, bytes]:
        assert self._lean is not None
        read, write = limits.read, limits.write
        try:
            return await self._lean.request(
                method,
                url,
                data,
                headers,
                pool_timeout=limits.pool,
                connect_timeout=limits.connect,
                # as with aiohttp below: writing and reading one bounded time
                read_timeout=None if read is None else read + (write or 0),
            )
        except http_client.NotSent as exc:
            raise NetworkError(f"http: {exc} (not sent)") from exc
        except TimeoutError as exc:
            raise TimedOut(f"http: {exc}") from exc
        except OSError as exc:
            raise NetworkError(f"http: {exc.__class__.__name__}: {exc}") from exc

    async def _aiohttp_request(
        self, url: str, method: str, data: bytes | None, headers: Headers, limits: Timeouts
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("ApiRequest is not initialized")
        read, write, connect, pool = limits
        # aiohttp has no separate write timeout: a request's whole time is bounded instead.
        total = None if read is None else read + (write or 0) + (connect or 0) + (pool or 0)
        timeout = aiohttp.ClientTimeout(
            total=total, connect=pool, sock_connect=connect, sock_read=read
        )
        try:
            async with self._session.request(
                method, url, data=data, headers=headers, timeout=timeout
            ) as response:
                status, body = response.status, await response.read()
        except aiohttp.ConnectionTimeoutError as exc:
            # no connection, so nothing was sent: safe to send again (bot.delivery), unlike
            # a read timeout, after which Telegram may still act on the request
            raise NetworkError(f"aiohttp: {exc.__class__.__name__} (not sent)") from exc
        except TimeoutError as exc:
            raise TimedOut(f"aiohttp: {exc.__class__.__name__}") from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp.{exc.__class__.__name__}: {exc}") from exc
        return status, body


# The parts of a message the bot sent that it never reads back from Telegram's answer (it
# reads message_id, chat and thread, to edit or reply later): the keyboard it sent itself,
# the text's entities (one object per bold or code span of an HTML answer), the quoted
# message a group reply carries, the link preview options.
UNREAD_FIELDS = (
    "reply_markup",
    "entities",
    "reply_to_message",
    "external_reply",
    "quote",
    "link_preview_options",
)
SEND_METHODS = ("/sendMessage",)
EDIT_METHODS = ("/editMessageText", "/editMessageReplyMarkup")


def trim_update(update: dict) -> dict:
    """An incoming update as the bot reads it: a button press's message (the bot's own, which
    it edits or replies to by id) without UNREAD_FIELDS. Its keyboard alone is ~145 us of
    the ~280 us PTB spends building such an update. Messages from people are left whole (a
    reply's quoted message and its buttons say which answer it follows up, bot.followup).
    Changes `update` in place and returns it."""
    query = update.get("callback_query")
    message = query.get("message") if isinstance(query, dict) else None
    if isinstance(message, dict):
        for field in UNREAD_FIELDS:
            message.pop(field, None)
    return update


class TrimmingRequest(ApiRequest):
    """The bot's transport: Telegram's answers to the calls that send or edit a message are
    cut to what the bot reads before PTB turns them into objects.

    Why: PTB builds a `Message` from every such answer (~100 us for the object alone, ~240
    us with a wizard page's 12-button keyboard, which the answer carries back; Telegram adds
    an entity per formatted span and, for a reply in a group, the whole quoted message):
    bench/api_cost.py. What changes for the bot:
    - sendMessage: the `Message` lacks UNREAD_FIELDS (None or empty); message_id, chat,
      thread, date and text are as Telegram sent them;
    - editMessageText / editMessageReplyMarkup: the answer is `True`, as Telegram answers
      for an inline message, so PTB returns True and builds nothing. The message edited is
      one the bot already holds (the pressed button's message, or its own placeholder):
      bot.replies.deliver returns that one;
    - getUpdates: each update through `trim_update` (the inbox has stored the answer whole
      before: `on_response` sees the bytes first).
    tests/test_lean.py pins these through PTB's own methods.
    """

    async def post(
        self,
        url: str,
        request_data: RequestData | None = None,
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> dict[str, Any] | list[dict[str, Any]] | bool:
        result = await super().post(
            url,
            request_data,
            read_timeout=read_timeout,  # type: ignore[arg-type]
            write_timeout=write_timeout,  # type: ignore[arg-type]
            connect_timeout=connect_timeout,  # type: ignore[arg-type]
            pool_timeout=pool_timeout,  # type: ignore[arg-type]
        )
        if isinstance(result, dict):
            if url.endswith(EDIT_METHODS):
                return True
            if url.endswith(SEND_METHODS):
                for field in UNREAD_FIELDS:
                    result.pop(field, None)
        elif isinstance(result, list) and url.endswith("/getUpdates"):
            for update in result:
                if isinstance(update, dict):
                    trim_update(update)
        return result
