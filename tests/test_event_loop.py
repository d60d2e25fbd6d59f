"""The faster paths (uvloop, orjson) are optional: without them the bot runs the same way,
and with them it reads Telegram's answers exactly as PTB's own parser does."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from types import ModuleType, SimpleNamespace

import pytest
from telegram.error import TelegramError
from telegram.request import BaseRequest

import bot.event_loop
import bot.http

ANSWERS = [
    b'{"ok":true,"result":[{"update_id":1,"message":{"message_id":7,"text":"\\u4f60\\u597d 4090"}}]}',
    '{"ok":true,"result":{"text":"显存 24 GB · ¥1.88/h","id":18446744073709551615}}'.encode(),
    b'{"ok":true,"result":{"big":123456789012345678901234567890,"f":1e400}}',  # past orjson
    b'{"ok":false,"error_code":429,"parameters":{"retry_after":3}}',
    b'{"ok":true,"result":"caf\xc3\xa9 \xff"}',  # invalid UTF-8: PTB replaces it
    b'{"ok":true,"result":NaN}',
]


def fresh_copy(module: ModuleType, name: str) -> ModuleType:
    """A second, private copy of `module` imported now (the real one stays as it is)."""
    assert module.__file__ is not None
    spec = importlib.util.spec_from_file_location(name, module.__file__)
    assert spec is not None and spec.loader is not None
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    return copy


@pytest.fixture
def fallback(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """bot.event_loop and bot.http as imported where uvloop and orjson are not installed
    (a None entry in sys.modules makes their import raise ImportError)."""
    monkeypatch.setitem(sys.modules, "uvloop", None)
    monkeypatch.setitem(sys.modules, "orjson", None)
    return SimpleNamespace(
        event_loop=fresh_copy(bot.event_loop, "fallback_event_loop"),
        http=fresh_copy(bot.http, "fallback_http"),
    )


def ptb_parse(payload: bytes) -> object:
    try:
        return BaseRequest.parse_json_payload(payload)
    except TelegramError as exc:
        return ("error", str(exc))


def our_parse(payload: bytes, http: ModuleType = bot.http) -> object:
    try:
        return http.AiohttpRequest.parse_json_payload(payload)
    except TelegramError as exc:
        return ("error", str(exc))


def same(a: object, b: object) -> bool:
    # NaN != NaN: compare the JSON text both would write back
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("payload", ANSWERS)
def test_answers_are_read_as_ptb_reads_them(payload: bytes) -> None:
    assert same(our_parse(payload), ptb_parse(payload))


@pytest.mark.parametrize("payload", ANSWERS)
def test_without_orjson_answers_are_read_as_ptb_reads_them(
    payload: bytes, fallback: SimpleNamespace
) -> None:
    assert fallback.http.orjson is None
    assert same(our_parse(payload, fallback.http), ptb_parse(payload))


def test_a_broken_answer_is_the_same_error_as_in_ptb() -> None:
    assert our_parse(b"<html>502</html>") == ptb_parse(b"<html>502</html>")
    assert our_parse(b"<html>502</html>")[0] == "error"  # type: ignore[index]


async def _loop_kind() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_the_bot_runs_on_uvloop_when_installed() -> None:
    pytest.importorskip("uvloop")
    assert bot.event_loop.name() == "uvloop"
    assert bot.event_loop.run(_loop_kind()).startswith("uvloop")


def test_without_uvloop_the_bot_runs_on_asyncio(fallback: SimpleNamespace) -> None:
    assert fallback.event_loop.name() == "asyncio"
    assert fallback.event_loop.run(_loop_kind()).startswith("asyncio")
