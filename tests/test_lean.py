"""The cheaper send path: keyboards sent as JSON, answers to sends and edits
trimmed before PTB builds a Message from them. What Telegram receives must be what it was
with PTB's objects, and PTB still returns the types it documents."""

from __future__ import annotations

import json

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.ext import ExtBot

from bot import fastjson
from bot.http import UNREAD_FIELDS, TrimmingRequest
from bot.replies import markup
from standin import STANDIN_TOKEN, FakeTelegram, User
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


async def test_a_sent_or_edited_message_is_a_message_without_the_unread_fields(
    tg: FakeTelegram,
) -> None:
    bot = ExtBot(STANDIN_TOKEN, base_url=tg.base_url, request=TrimmingRequest())
    await bot.initialize()
    try:
        sent = await bot.send_message(
            10001, "<b>hi</b>", parse_mode="HTML", api_kwargs={"reply_markup": markup(ROWS)}
        )
        assert isinstance(sent, Message)
        assert sent.message_id == tg.sent("sendMessage")[-1].result["message_id"]
        assert sent.chat.id == 10001 and sent.text == "hi"
        assert sent.reply_markup is None  # trimmed: Telegram's answer carried it
        assert "reply_markup" in tg.sent("sendMessage")[-1].result
        edited = await sent.edit_text(
            "<i>there</i>", parse_mode="HTML", api_kwargs={"reply_markup": markup(ROWS)}
        )
        assert isinstance(edited, Message)  # PTB's documented type, not `True`
        assert edited.message_id == sent.message_id and edited.text == "there"
        assert edited.reply_markup is None
        assert tg.sent("editMessageText")[-1].result["reply_markup"] == markup(ROWS)
        # getMe and other answers are left whole
        assert bot.bot.username == tg.bot_user["username"]
    finally:
        await bot.shutdown()


def test_only_fields_of_a_message_the_bot_does_not_read_are_trimmed() -> None:
    fields = {f for c in Message.__mro__[:-1] for f in getattr(c, "__slots__", ())}
    assert set(UNREAD_FIELDS) <= fields
    assert not {"message_id", "chat", "message_thread_id", "date", "text"} & set(UNREAD_FIELDS)


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
