"""A lean HTTP/1.1 client for the Bot API: keep-alive connections to one or a few hosts,
a body out, status and body back.

Why: aiohttp's client spends ~150-190 us of CPU per request on this machine class, this
one ~40-55 us (bench/api_cost.py prints both, same run: rows `aiohttp` and `raw`), and the
bot makes ~1.8 requests per update (getUpdates, answerCallbackQuery, editMessageText,
sendMessage): with it the bot's CPU per update in bench/load.py is ~17% lower. Opt-in
(HTTP_CLIENT=lean, bot.http): aiohttp's client stays the default. The bytes on the wire
are the parts that are hard to get right, and those are httptools' (MagicStack; llhttp,
Node.js's parser; the parser under uvicorn): status line, headers, Content-Length and
chunked bodies, keep-alive. What is ours: writing a request, a pool of idle connections, timeouts.

What it does not do, because the bot needs none of it: proxies, redirects, compression (no
Accept-Encoding is sent, so answers come as they are), uploads, cookies, HTTP/2.

Errors (bot.http maps them to PTB's): `NotSent` — nothing reached the server (no free
connection in time, connecting failed or timed out), safe to send again; `TimeoutError` —
the answer did not come in time (the server may still act); `ConnectionError` — the
connection broke or the answer was not HTTP.
"""

from __future__ import annotations

import asyncio
import ssl
from urllib.parse import urlsplit

import httptools


class NotSent(ConnectionError):
    """Nothing of the request reached the server."""


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection; one request at a time on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[tuple[int, bytes, bool]] | None = None
        self._chunks: list[bytes] = []
        self._headers_done = False
        self._delimited = False  # Content-Length or chunked: the end is known before EOF

    # --- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # nothing asked: not a server we can trust with the next
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ConnectionError(f"not an HTTP answer: {exc}"))
            self.close()

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter, self._waiter = self._waiter, None
        if waiter is None or waiter.done():
            return
        if self._headers_done and not self._delimited:  # an answer that ends at EOF
            waiter.set_result((self._parser.get_status_code(), b"".join(self._chunks), False))
        else:
            waiter.set_exception(ConnectionError("the connection closed before the answer"))

    # --- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length" or (
            name == b"transfer-encoding" and b"chunked" in value.lower()
        ):
            self._delimited = True

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            keep = self._parser.should_keep_alive()
            waiter.set_result((self._parser.get_status_code(), b"".join(self._chunks), keep))

    # --- ours
    def send(self, data: bytes) -> asyncio.Future[tuple[int, bytes, bool]]:
        assert self.transport is not None and self._waiter is None
        self._chunks = []
        self._headers_done = self._delimited = False
        self._waiter = waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return waiter

    def time_out(self) -> None:
        self._fail(TimeoutError("no answer in time"))
        self.close()

    def _fail(self, exc: Exception) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class _Origin:
    """Where a base URL's requests go, worked out once."""

    def __init__(self, scheme: str, netloc: str) -> None:
        parts = urlsplit(f"{scheme}://{netloc}")
        if scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"cannot send to {scheme}://{netloc}")
        self.host = parts.hostname
        self.tls = scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.host_header = netloc
        self.idle: list[_Connection] = []


class Client:
    """Keep-alive connections, at most `limit` open at once over all hosts."""

    def __init__(self, limit: int, user_agent: str, ssl_context: ssl.SSLContext | None = None):
        self._limit = limit
        self._slots: asyncio.Semaphore | None = None  # made on the loop that uses it
        self._user_agent = user_agent
        self._ssl = ssl_context
        self._origins: dict[str, _Origin] = {}
        self._open: set[_Connection] = set()

    def _origin(self, url: str) -> tuple[_Origin, str]:
        scheme, sep, rest = url.partition("://")
        netloc, slash, path = rest.partition("/")
        if not sep:
            raise ValueError(f"not an absolute URL: {url!r}")
        key = f"{scheme}://{netloc}"
        origin = self._origins.get(key)
        if origin is None:
            origin = self._origins[key] = _Origin(scheme, netloc)
        return origin, slash + path or "/"

    def _ssl_context(self) -> ssl.SSLContext:
        """The system's certificates, and certifi's where installed (PTB's httpx brings it):
        a slim container image may lack the system's bundle."""
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
            try:
                import certifi
            except ImportError:  # pragma: no cover - certifi comes with PTB's httpx
                pass
            else:
                self._ssl.load_verify_locations(certifi.where())
        return self._ssl

    async def _connect(self, origin: _Origin, timeout: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        tls = self._ssl_context() if origin.tls else None
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(
                    _Connection,
                    origin.host,
                    origin.port,
                    ssl=tls,
                    server_hostname=origin.host if tls else None,
                )
        except TimeoutError as exc:
            raise NotSent(f"connecting to {origin.host_header} timed out") from exc
        except OSError as exc:
            raise NotSent(f"cannot connect to {origin.host_header}: {exc}") from exc
        self._open.add(conn)
        return conn

    async def request(
        self,
        method: str,
        url: str,
        body: bytes | None,
        headers: dict[str, str] | None,
        *,
        pool_timeout: float | None,
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> tuple[int, bytes]:
        origin, path = self._origin(url)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._limit)
        if self._slots.locked():
            try:
                async with asyncio.timeout(pool_timeout):
                    await self._slots.acquire()
            except TimeoutError as exc:
                raise NotSent("no free connection in time") from exc
        else:
            await self._slots.acquire()
        try:
            return await self._exchange(
                origin,
                self._encode(method, origin, path, body, headers),
                connect_timeout,
                read_timeout,
            )
        finally:
            self._slots.release()

    def _encode(
        self,
        method: str,
        origin: _Origin,
        path: str,
        body: bytes | None,
        headers: dict[str, str] | None,
    ) -> bytes:
        body = body or b""
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {origin.host_header}",
            f"User-Agent: {self._user_agent}",
            f"Content-Length: {len(body)}",
        ]
        if headers:
            lines.extend(f"{k}: {v}" for k, v in headers.items())
        head = "\r\n".join(lines) + "\r\n\r\n"
        return head.encode("ascii") + body

    async def _exchange(
        self, origin: _Origin, data: bytes, connect_timeout: float | None, read: float | None
    ) -> tuple[int, bytes]:
        conn = None
        while origin.idle:  # the latest idle connection first; the server may have closed some
            candidate = origin.idle.pop()
            if not candidate.closed:
                conn = candidate
                break
            self._open.discard(candidate)
        if conn is None:
            conn = await self._connect(origin, connect_timeout)
        waiter = conn.send(data)
        timer = None if read is None else asyncio.get_running_loop().call_later(read, conn.time_out)
        try:
            status, body, keep = await waiter
        except BaseException:  # broken, timed out or cancelled: its state is unknown
            conn.close()
            self._open.discard(conn)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if keep and not conn.closed:
            origin.idle.append(conn)
        else:
            conn.close()
            self._open.discard(conn)
        return status, body

    async def close(self) -> None:
        for conn in self._open:
            conn.close()
        self._open.clear()
        for origin in self._origins.values():
            origin.idle.clear()
