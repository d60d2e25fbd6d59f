"""The cheaper send path (issue 18): keyboards sent as JSON. What Telegram receives must be
what it was with PTB's objects."""

from __future__ import annotations

import json

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot import fastjson
from bot.replies import markup
from standin import User
from tests.conftest import press, say

ROWS = [
    [("Qwen2.5-7B", "w|7|c|model_llm|0"), ("Llama-3.1-8B", "w|7|c|model_llm|1")],
    [],  # an empty row is left out (bot.replies.markup always left it out)
    [("返回", "w|7|b"), ("Cancel", "w|7|x")],
]


def test_keyboard_json_is_what_ptb_would_send() -> None:
    ptb = InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(text, callback_data=data) for text, data in row]
            for row in ROWS
            if row
        ]
    )
    assert markup(ROWS) == ptb.to_dict()
    assert markup([]) is None and markup(None) is None


async def test_the_wizard_sends_its_keyboards_and_edits_its_page(tg, bot) -> None:  # noqa: ANN001
    """The whole path through the bot: the keyboard reaches Telegram as JSON buttons, and the
    page is edited in place."""
    user = User(501, "Ann", "en")
    first = await say(tg, user, "/start")
    assert first.method == "sendMessage"
    rows = first.params["reply_markup"]["inline_keyboard"]
    assert all(set(b) == {"text", "callback_data"} for row in rows for b in row)
    step = await press(tg, user, first, "Run an LLM")
    assert step.method == "editMessageText"
    assert int(step.params["message_id"]) == first.result["message_id"]
    assert step.params["reply_markup"]["inline_keyboard"]


def test_persisted_data_is_encoded_the_same_whatever_its_key_order() -> None:
    a = {"wizard": {"-100": {"task": "infer", "answers": {"b": [1], "a": ["二"]}}}, "lang": "zh"}
    b = {"lang": "zh", "wizard": {"-100": {"answers": {"a": ["二"], "b": [1]}, "task": "infer"}}}
    assert fastjson.dumps(a, sort_keys=True) == fastjson.dumps(b, sort_keys=True)
    assert json.loads(fastjson.dumps(a, sort_keys=True)) == a
    odd = {7: "int keys, which orjson refuses", 5: "half a pair: \ud83d"}  # as json.dumps
    assert fastjson.dumps(odd, sort_keys=True) == json.dumps(odd, sort_keys=True)
