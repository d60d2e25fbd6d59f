"""The 📊 picture of an answer's memory breakdown (bot/chart.py): a PNG that opens, of a size
Telegram takes, naming the card and the terms in the reader's language; sent with sendPhoto
through the stand-in; drawn once per answer; Chinese without a CJK font degrades to English
labels instead of failing."""

from __future__ import annotations

import io

from PIL import Image

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from bot import answer, chart
from standin import FakeTelegram, User
from tests.conftest import button, buttons, say


def _draw(q: str, lang: str) -> chart.Chart:
    rec = recommend_query(parse_query(q), default_currency="USD")
    drawn = chart.draw(rec, lang)
    assert drawn is not None
    return drawn


def _opened(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def test_the_chart_is_a_png_naming_the_card_and_its_terms() -> None:
    drawn = _draw("3090 能跑 glm-4-9b 吗", "en")
    image = _opened(drawn.png)
    assert image.format == "PNG"
    assert 500 <= image.width <= 1600 and 250 <= image.height <= 1200
    assert (image.width, image.height) == (drawn.width_px, drawn.height_px)
    names = " | ".join(drawn.texts)
    assert "1× RTX 3090 (yours)" in drawn.texts  # the user's card, judged
    for word in ("weights", "KV cache", "usable memory", "20% free", "GLM-4 9B"):
        assert word in names, word
    # one bar per option: the user's card and each pick
    assert sum(1 for t in drawn.texts if "× " in t and " GiB" not in t) >= 2


def test_a_chinese_chart_is_labelled_in_chinese() -> None:
    if chart.cjk_font() is None:  # pragma: no cover - the container installs one
        import pytest

        pytest.skip("no CJK font on this machine")
    drawn = _draw("3090 能跑 glm-4-9b 吗", "zh")
    assert drawn.lang == "zh"
    assert "1× RTX 3090（你的）" in drawn.texts and "模型权重" in drawn.texts
    assert _opened(drawn.png).format == "PNG"


def test_without_a_cjk_font_a_chinese_chart_falls_back_to_english(monkeypatch) -> None:
    monkeypatch.setattr(chart, "CJK_FAMILIES", ("No Such Font",))
    chart.cjk_font.cache_clear()
    try:
        drawn = _draw("3090 能跑 glm-4-9b 吗", "zh")
    finally:
        chart.cjk_font.cache_clear()
    assert drawn.lang == "en" and "weights" in drawn.texts
    assert _opened(drawn.png).format == "PNG"


def test_a_task_without_a_memory_figure_has_no_chart() -> None:
    rec = recommend_query(parse_query("render a blender scene"), default_currency="USD")
    assert chart.draw(rec, "en") is None


async def test_the_chart_button_sends_a_photo_drawn_once(
    tg: FakeTelegram, bot, monkeypatch
) -> None:
    drawn: list[str] = []

    def counting(rec, lang):  # noqa: ANN001, ANN202
        drawn.append(lang)
        return chart.draw(rec, lang)

    monkeypatch.setattr(answer, "draw", counting)
    answer._CHARTS.clear()
    me = User(7201, "Kai", "en")
    first = await say(tg, me, "qwen2.5-14b lora on 3090")
    start = len(tg.calls)
    photo = await tg.reply_to(
        tg.user_clicks(me, first.result, button(first, "📊")), method="sendPhoto"
    )
    assert photo.method == "sendPhoto" and photo.error is None
    image = _opened(photo.params["_files"]["photo"])
    assert image.format == "PNG" and photo.result["photo"][0]["width"] == image.width
    assert photo.result["caption"].startswith("📊")
    # the photo answers the message whose button was pressed; that message is left as it is
    assert not [c for c in tg.calls[start:] if c.method == "editMessageText"]
    again = await tg.reply_to(
        tg.user_clicks(me, first.result, button(first, "📊")), method="sendPhoto"
    )
    assert again.method == "sendPhoto" and drawn == ["en"]  # drawn once per answer


async def test_a_chart_of_a_task_without_a_figure_is_an_alert(tg: FakeTelegram, bot) -> None:
    me = User(7202, "Lu", "en")
    first = await say(tg, me, "render a blender scene")
    start = len(tg.calls)
    tg.user_clicks(me, first.result, next(d for t, d in buttons(first) if "📊" in t))
    alert = await tg.wait_for(
        lambda c: c.seq >= start and c.method == "answerCallbackQuery" and c.params.get("text")
    )
    assert "No picture" in alert.params["text"]
    assert not [c for c in tg.calls[start:] if c.method == "sendPhoto"]
