"""uvloop is optional (the bot runs the same on asyncio's loop); orjson, the one JSON path,
reads Telegram's answers exactly as PTB's own parser does and writes what it refuses as the
standard library would."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from types import ModuleType, SimpleNamespace

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import TelegramError
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter

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
    """bot.event_loop as imported where uvloop is not installed (a None entry in
    sys.modules makes its import raise ImportError)."""
    monkeypatch.setitem(sys.modules, "uvloop", None)
    return SimpleNamespace(event_loop=fresh_copy(bot.event_loop, "fallback_event_loop"))


def ptb_parse(payload: bytes) -> object:
    try:
        return BaseRequest.parse_json_payload(payload)
    except TelegramError as exc:
        return ("error", str(exc))


def our_parse(payload: bytes, http: ModuleType = bot.http) -> object:
    try:
        return http.ApiRequest.parse_json_payload(payload)
    except TelegramError as exc:
        return ("error", str(exc))


def same(a: object, b: object) -> bool:
    # NaN != NaN: compare the JSON text both would write back
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("payload", ANSWERS)
def test_answers_are_read_as_ptb_reads_them(payload: bytes) -> None:
    assert same(our_parse(payload), ptb_parse(payload))


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


def _request(**params: object) -> RequestData:
    return RequestData([RequestParameter.from_input(k, v) for k, v in params.items()])


REQUESTS = [
    _request(
        chat_id=-1001234567890,
        text="显存 24 GB · ¥1.88/h & <b>4090</b> 🚀",
        reply_markup=InlineKeyboardMarkup(
            [[InlineKeyboardButton("💰 预算", callback_data="a|7|m")]]
        ),
        disable_notification=True,
        parse_mode=None,
    ),
    _request(callback_query_id="42", show_alert=False),
]


@pytest.mark.parametrize("request_data", REQUESTS)
def test_a_json_body_carries_what_the_form_would(request_data: RequestData) -> None:
    body, headers = bot.http.encode_body(request_data)
    assert headers == {"Content-Type": "application/json"}
    sent = json.loads(body)  # type: ignore[arg-type]
    # what the Bot API reads from either: the form's values are JSON texts of the same
    form = request_data.json_parameters
    assert set(sent) == set(form)
    for name, value in sent.items():
        assert value == (form[name] if isinstance(value, str) else json.loads(form[name]))


def test_a_text_orjson_refuses_goes_as_ascii_json() -> None:
    data = _request(chat_id=5, text="half a pair: \ud83d")
    body, headers = bot.http.encode_body(data)
    assert headers == {"Content-Type": "application/json"}
    assert json.loads(body) == {"chat_id": 5, "text": "half a pair: \ud83d"}  # type: ignore[arg-type]


INBOX_UPDATES = [
    {"update_id": 1, "message": {"message_id": 7, "text": "你好 4090 🚀", "chat": {"id": -100}}},
    {"update_id": 2, "message": {"text": "half a pair: \ud83d"}},  # orjson refuses it
    {"update_id": 3, "callback_query": {"id": "18446744073709551615", "data": "w|5|t|lora"}},
]


@pytest.mark.parametrize("update", INBOX_UPDATES)
def test_an_inbox_row_reads_back_as_the_update(update: dict) -> None:
    import bot.fastjson

    text = bot.fastjson.dumps(update)
    assert json.loads(text) == update  # what the replay at start-up reads
    assert bot.fastjson.loads(text.encode()) == update
