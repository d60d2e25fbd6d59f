"""bot.http_client, the bot's lean HTTP/1.1 client, against scripted servers on 127.0.0.1:
what it sends, how it reads each way an answer can end, keep-alive and its failures, the
timeouts and what each error means to bot.delivery (sent or not). And bot.http's fallback
to aiohttp's client where httptools is missing."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from telegram.error import NetworkError, TimedOut
from telegram.ext import ExtBot

import bot
import bot.http
from bot.http_client import Client, NotSent
from standin import STANDIN_TOKEN, FakeTelegram

OK = b'{"ok":true,"result":true}'


def answer(body: bytes = OK, *extra: bytes) -> bytes:
    head = [b"HTTP/1.1 200 OK", b"Content-Type: application/json", *extra]
    head.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class Script:
    """A server that reads each request whole and answers what `reply(request)` returns
    (None: answer nothing and keep the connection open). Counts connections."""

    def __init__(self, reply: Callable[[bytes], bytes | None]) -> None:
        self.reply = reply
        self.requests: list[bytes] = []
        self.connections = 0
        self.close_after: set[int] = set()  # close the connection after these requests (1-based)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                out = self.reply(request)
                if out is None:
                    await asyncio.sleep(3600)
                writer.write(out)
                await writer.drain()
                if len(self.requests) in self.close_after or b"Connection: close" in out:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def serving(script: Script, ssl_context: ssl.SSLContext | None = None) -> asyncio.Server:
    return await asyncio.start_server(script.handle, "127.0.0.1", 0, ssl=ssl_context)


def url_of(server: asyncio.Server, path: str = "/bot123:abc/getMe", scheme: str = "http") -> str:
    port = server.sockets[0].getsockname()[1]
    return f"{scheme}://127.0.0.1:{port}{path}"


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    c = Client(8, "test-agent")
    yield c
    await c.close()


async def send(client: Client, url: str, body: bytes | None = b'{"a":1}', **timeouts: float):
    limits = {"pool_timeout": 1.0, "connect_timeout": 1.0, "read_timeout": 2.0} | timeouts
    return await client.request("POST", url, body, {"Content-Type": "application/json"}, **limits)


async def test_request_as_sent_and_keep_alive_reuses_one_connection(client: Client) -> None:
    script = Script(lambda _: answer())
    async with await serving(script) as server:
        url = url_of(server, "/bot123:abc/sendMessage")
        for _ in range(3):
            assert await send(client, url) == (200, OK)
    assert script.connections == 1
    head, _, body = script.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /bot123:abc/sendMessage HTTP/1.1"
    port = server.sockets[0].getsockname()[1] if server.sockets else None
    assert any(line.startswith(b"Host: 127.0.0.1:") for line in lines), port
    assert b"Content-Length: 7" in lines and b"Content-Type: application/json" in lines
    assert b"User-Agent: test-agent" in lines
    assert body == b'{"a":1}'


async def test_a_request_without_body_says_length_zero(client: Client) -> None:
    script = Script(lambda _: answer())
    async with await serving(script) as server:
        assert await send(client, url_of(server), body=None) == (200, OK)
    assert b"Content-Length: 0" in script.requests[0]


async def test_chunked_answer_is_read_whole(client: Client) -> None:
    body = b'{"ok":true,"result":[' + b",".join(b"%d" % i for i in range(2000)) + b"]}"
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + 1000]), body[i : i + 1000])
        for i in range(0, len(body), 1000)
    )
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
    script = Script(lambda _: raw)
    async with await serving(script) as server:
        assert await send(client, url_of(server)) == (200, body)
        assert await send(client, url_of(server)) == (200, body)  # and the connection is kept
    assert script.connections == 1


async def test_answer_that_ends_at_eof_is_read_whole_and_not_reused(client: Client) -> None:
    # no Content-Length, not chunked: the body is what comes before the server closes
    script = Script(lambda _: b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + OK)
    async with await serving(script) as server:
        assert await send(client, url_of(server)) == (200, OK)
        assert await send(client, url_of(server)) == (200, OK)
    assert script.connections == 2


async def test_connection_close_answer_opens_a_new_connection_next(client: Client) -> None:
    script = Script(lambda _: answer(OK, b"Connection: close"))
    async with await serving(script) as server:
        for _ in range(2):
            assert await send(client, url_of(server)) == (200, OK)
    assert script.connections == 2


async def test_error_status_and_body_come_back_as_sent(client: Client) -> None:
    body = b'{"ok":false,"error_code":429,"parameters":{"retry_after":3}}'
    script = Script(lambda _: answer(body).replace(b"200 OK", b"429 Too Many Requests"))
    async with await serving(script) as server:
        assert await send(client, url_of(server)) == (429, body)


async def test_idle_connection_closed_by_the_server_is_not_reused(client: Client) -> None:
    script = Script(lambda _: answer())
    script.close_after = {1}
    async with await serving(script) as server:
        assert await send(client, url_of(server)) == (200, OK)
        await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
        assert await send(client, url_of(server)) == (200, OK)
    assert script.connections == 2


async def test_not_http_is_a_connection_error_and_the_connection_is_dropped(
    client: Client,
) -> None:
    replies = iter([b"SSH-2.0-OpenSSH_9.6\r\n\r\n", answer()])
    script = Script(lambda _: next(replies))
    async with await serving(script) as server:
        with pytest.raises(ConnectionError) as err:
            await send(client, url_of(server))
        assert not isinstance(err.value, NotSent)  # it was sent
        assert await send(client, url_of(server)) == (200, OK)
    assert script.connections == 2


async def test_no_answer_in_time_is_a_timeout_and_the_connection_is_dropped(
    client: Client,
) -> None:
    replies = iter([None, answer()])
    script = Script(lambda _: next(replies))
    async with await serving(script) as server:
        with pytest.raises(TimeoutError):
            await send(client, url_of(server), read_timeout=0.2)
        assert await send(client, url_of(server)) == (200, OK)
    assert script.connections == 2


async def test_connection_refused_is_not_sent(client: Client) -> None:
    server = await serving(Script(lambda _: answer()))
    url = url_of(server)
    server.close()
    await server.wait_closed()
    with pytest.raises(NotSent):
        await send(client, url)


async def test_no_free_connection_in_time_is_not_sent() -> None:
    client = Client(1, "test-agent")
    replies = iter([None, answer()])
    script = Script(lambda _: next(replies))
    async with await serving(script) as server:
        hanging = asyncio.create_task(send(client, url_of(server), read_timeout=5))
        await asyncio.sleep(0.05)
        with pytest.raises(NotSent):
            await send(client, url_of(server), pool_timeout=0.1)
        hanging.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hanging
        # the cancelled request's connection was dropped and its slot freed
        assert await send(client, url_of(server)) == (200, OK)
    await client.close()
    assert script.connections == 2


async def test_concurrent_requests_each_get_their_own_answer(client: Client) -> None:
    def echo(request: bytes) -> bytes:
        return answer(request.partition(b"\r\n\r\n")[2])

    script = Script(echo)
    async with await serving(script) as server:
        bodies = [b'{"n":%d}' % i for i in range(40)]
        got = await asyncio.gather(*(send(client, url_of(server), body=b) for b in bodies))
    assert got == [(200, b) for b in bodies]
    assert script.connections <= 8  # the pool's limit


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
async def test_https_with_the_servers_certificate_checked(client: Client, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    script = Script(lambda _: answer())
    async with await serving(script, server_side) as server:
        port = server.sockets[0].getsockname()[1]
        url = f"https://localhost:{port}/bot123:abc/getMe"
        trusting = Client(8, "test-agent", ssl.create_default_context(cafile=str(cert)))
        assert await send(trusting, url) == (200, OK)
        await trusting.close()
        with pytest.raises(NotSent):  # a certificate nobody vouches for: refused, not sent
            await send(client, url)
    assert b"Host: localhost:" in script.requests[0]


# --- bot.http: the client behind PTB, and the fallback


async def test_api_request_maps_the_clients_errors_for_bot_delivery() -> None:
    request = bot.http.ApiRequest(
        read_timeout=0.2, connect_timeout=0.5, pool_timeout=0.1, client="lean"
    )
    assert request.client == "lean"
    await request.initialize()
    replies = iter([None])
    script = Script(lambda _: next(replies))
    try:
        async with await serving(script) as server:
            with pytest.raises(TimedOut):
                await request.do_request(url_of(server), "POST", write_timeout=0.0)
            url = url_of(server)
        with pytest.raises(NetworkError, match=r"\(not sent\)"):
            await request.do_request(url, "POST")
    finally:
        await request.shutdown()


@pytest.mark.parametrize("client_name", ["lean", "aiohttp"])
async def test_both_clients_carry_ptb_calls_to_the_stand_in(
    client_name: str, tg: FakeTelegram
) -> None:
    ptb = ExtBot(
        STANDIN_TOKEN, base_url=tg.base_url, request=bot.http.TrimmingRequest(client=client_name)
    )
    async with ptb:
        me = await ptb.get_me()
        sent = await ptb.send_message(10001, "<b>你好</b> &amp; more", parse_mode="HTML")
    assert me.is_bot and sent.text == "你好 & more"
    assert tg.sent("sendMessage")[-1].params["text"] == "<b>你好</b> &amp; more"


def test_without_httptools_the_default_transport_still_works_and_lean_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.test_event_loop import fresh_copy

    monkeypatch.setitem(sys.modules, "httptools", None)
    monkeypatch.delitem(sys.modules, "bot.http_client")
    monkeypatch.delattr(bot, "http_client")
    fallback = fresh_copy(bot.http, "no_httptools_http")
    assert fallback.http_client is None
    assert fallback.ApiRequest().client == "aiohttp"
    with pytest.raises(ValueError, match="no such HTTP client"):
        fallback.ApiRequest(client="lean")


@pytest.mark.parametrize("client_name", ["lean", None])
async def test_the_bot_answers_and_edits_on_the_client_its_settings_name(
    tg: FakeTelegram, tmp_path: Path, client_name: str | None
) -> None:
    """HTTP_CLIENT: empty is aiohttp's client; "lean" the bot's own. Either way a
    question is answered and a button edits the answer (sendMessage, answerCallbackQuery,
    editMessageText, getUpdates all through it)."""
    from standin import User
    from tests.conftest import buttons, halt, launch, make_settings, press, say, shown

    app = await launch(make_settings(tg, tmp_path / "bot.sqlite3", http_client=client_name))
    try:
        assert app.bot.request.client == (client_name or "aiohttp")
        assert app.bot._request[0].client == (client_name or "aiohttp")  # getUpdates'
        bo = User(2101, "Bo", "en")
        reply = await say(tg, bo, "/vram 13B fp16")
        assert "13B" in shown(reply)
        edited = await press(tg, bo, reply, buttons(reply)[0][0])
        assert edited.method == "editMessageText"
        for _ in range(100):  # the press's answer travels beside the edit (answer_soon)
            if tg.sent("answerCallbackQuery"):
                break
            await asyncio.sleep(0.02)
        assert tg.sent("answerCallbackQuery")
    finally:
        await halt(tg, app)
