"""PTB's HTTP transport on aiohttp's client (PTB's `BaseRequest`, its documented way to
bring another client): we only move bytes; PTB still builds the requests and maps status
codes and `parameters` (retry_after, migrate_to_chat_id) to its exceptions, and returns its
own types.

Why aiohttp and not PTB's HTTPXRequest: the load bench showed the HTTP client was most of
the bot's CPU per update, httpx the costliest of those measured (bench/api_cost.py), and
aiohttp is a dependency already (the webhook server). `on_response` hands every 200 answer
to the inbox before PTB parses it. Requests are JSON bodies (orjson, a dependency), but for
the one upload the bot makes, the 📊 chart (sendPhoto): multipart/form-data
(`encode_multipart`, tests/test_chart.py sends it through the stand-in).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, cast

import aiohttp
import orjson
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

# PTB's "not given: the transport's own default" marker, known by its public instance
# (PTB's DefaultValue lives in a private module)
DefaultValue = type(BaseRequest.DEFAULT_NONE)


JSON_HEADERS = {"Content-Type": "application/json"}


def encode_body(request_data: RequestData | None) -> tuple[bytes | None, dict[str, str] | None]:
    """A request's parameters as a JSON body (the Bot API takes application/json as well as
    a form): one orjson call, where a form costs the standard library's json.dumps of every
    keyboard and quote_plus of every byte of the text (~5% of the bot's CPU in the load
    bench, long Chinese answers the most)."""
    if request_data is None or not request_data.parameters:
        return None, None
    try:
        return orjson.dumps(request_data.parameters), JSON_HEADERS
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, which a form cannot
        # carry either (quote_plus encodes strict UTF-8); ASCII JSON escapes it
        return json.dumps(request_data.parameters).encode(), JSON_HEADERS


def encode_multipart(request_data: RequestData) -> tuple[bytes, dict[str, str]]:
    """A request that uploads a file (sendPhoto: the 📊 chart) as multipart/form-data, the
    one encoding the Bot API takes uploads in: each parameter JSON-encoded as PTB's own
    transport sends it (`json_parameters`), each file as a part with its name and type
    (`multipart_data`). Rare (a pressed chart button), so written for clarity."""
    boundary = uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in request_data.json_parameters.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
        parts.append(head.encode() + value.encode() + b"\r\n")
    for name, (filename, content, mime) in request_data.multipart_data.items():
        body = content if isinstance(content, bytes) else content.read()
        head = (
            f"--{boundary}\r\nContent-Disposition: form-data; "
            f'name="{name}"; filename="{filename}"\r\nContent-Type: {mime}\r\n\r\n'
        )
        parts.append(head.encode() + body + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), {"Content-Type": f"multipart/form-data; boundary={boundary}"}


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
    ) -> None:
        """`on_response` sees every 200 answer's body before PTB does (the inbox uses it)."""
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
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size, enable_cleanup_closed=True)
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.USER_AGENT}
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    @staticmethod
    def parse_json_payload(payload: bytes) -> dict[str, Any]:
        """PTB's hook for a faster JSON library: orjson (Rust, several times the standard
        library's speed on Bot API answers). Anything orjson refuses (invalid UTF-8, NaN,
        integers past 64 bits) goes to PTB's own parser, which decides as it always did."""
        try:
            return orjson.loads(payload)
        except ValueError:
            return BaseRequest.parse_json_payload(payload)

    @staticmethod
    def _pick(value: object, default: float | None) -> float | None:
        return default if isinstance(value, DefaultValue) else cast("float | None", value)

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
        data: bytes | None
        headers: Headers
        if request_data is not None and request_data.contains_files:
            data, headers = encode_multipart(request_data)
        else:
            data, headers = encode_body(request_data)
        status, body = await self._aiohttp_request(url, method, data, headers, limits)
        if status == 200 and self._on_response is not None:
            await self._on_response(body)
        return status, body

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
SENT_METHODS = ("/sendMessage", "/editMessageText", "/editMessageReplyMarkup")


class TrimmingRequest(ApiRequest):
    """The bot's transport: Telegram's answer to a call that sends or edits a message loses
    UNREAD_FIELDS before PTB builds the `Message` from it. PTB still returns the type it
    documents (a `Message`; `True` only where Telegram answers `true`, for an inline
    message), with message_id, chat, thread, date and text as Telegram sent them.

    Why: PTB builds a `Message` from every such answer, ~100 us for the object alone and
    ~240 us with a wizard page's 12-button keyboard that the answer carries back
    (bench/api_cost.py); without the trim the load bench's bot CPU per update rose by about
    a third (docs/performance.md). Updates the bot receives are never trimmed: handlers see
    them as Telegram sent them (tests/test_lean.py).
    """

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
        status, body = await super().do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )
        if status == 200 and url.endswith(SENT_METHODS):
            body = trimmed(body)
        return status, body


def trimmed(body: bytes) -> bytes:
    """Telegram's answer without UNREAD_FIELDS in its `result` (a message; `true` for an
    inline message is left as it is). Done on the bytes PTB then parses, in
    `do_request`, PTB's documented hook for a transport (its `post` is final): one more
    orjson read and write of a short answer, a few microseconds against the ~100-240 us of
    the `Message` it spares."""
    try:
        answer = orjson.loads(body)
    except ValueError:
        return body  # PTB's parser decides, as for any answer
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return body
    for field in UNREAD_FIELDS:
        result.pop(field, None)
    return orjson.dumps(answer)
