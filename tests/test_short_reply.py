"""The first reply to a question is short enough to read on a phone (docs/answers.md): the
real bot against the Bot API stand-in, ten questions in Chinese and ten in English, in a
private chat and in a group. Each first reply is at most 900 visible characters, carries
the buttons that open the rest in place, and a Chinese question is answered in Chinese,
whatever the asker's phone is set to."""

from __future__ import annotations

import re

import pytest

from standin import Chat, FakeTelegram, User, utf16_len
from tests.conftest import button, buttons, press, say, shown

SHORT_LIMIT = 900
ZH = [
    "3090 能跑 glm-4-9b 吗",
    "qwen2.5-7b lora 微调 用 4090",
    "72b 推理 需要几张 a100",
    "sdxl 画图 用 3060",
    "deepseek-v3 推理 8 张 h200",
    "llama3-8b 全参微调 预算 ¥10/h",
    "qwen2.5-14b int4 32k 上下文",
    "bert-base 课程作业",
    "训练 resnet50",
    "gpt-oss-120b qlora 在 4090 上",
]
EN = [
    "train llama3-8b lora",
    "qwen2.5-72b vllm 32k on 2x h100",
    "sdxl on 3060",
    "mixtral-8x7b inference int4",
    "llama-3.1-70b qlora on a100",
    "deepseek-v3 fp8 on 8x h200",
    "qwen2.5-0.5b full finetune budget $1/h",
    "13b fp16 on 4090",
    "flux.1-dev on 4090",
    "whisper large-v3 inference",
]
PARTS = {
    "zh": ("📊 图表", "🧮 显存构成", "🛒 全部推荐", "📋 默认假设", "⚠️ 注意事项", "换精度"),
    "en": ("📊 Chart", "🧮 Breakdown", "🛒 All picks", "📋 Assumed", "⚠️ Watch out", "Precision"),
}
GROUP = Chat(-1005550033, "supergroup", "nlp lab")
AT = "@GpuAdvisorBot"


def han_share(text: str) -> float:
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return han / max(1, han + latin)


def check_first_reply(text: str, labels: list[str], lang: str) -> list[str]:
    problems = []
    if utf16_len(text) > SHORT_LIMIT:
        problems.append(f"{utf16_len(text)} visible characters")
    missing = [p for p in PARTS[lang] if not any(p in label for label in labels)]
    if missing:
        problems.append(f"no buttons {missing}")
    if lang == "zh" and han_share(text) < 0.25:
        problems.append(f"not in Chinese ({han_share(text):.2f})")
    if lang == "en" and han_share(text) > 0.05:
        problems.append(f"not in English ({han_share(text):.2f})")
    return problems


@pytest.mark.parametrize(("lang", "questions"), [("zh", ZH), ("en", EN)])
async def test_ten_first_replies_are_short_have_buttons_and_speak_the_question(
    tg: FakeTelegram, bot, lang: str, questions: list[str]
) -> None:
    # the Chinese questions come from a phone set to English: the question's language wins
    asker = User(7101 if lang == "zh" else 7102, "Lin", "en")
    member = User(7103 if lang == "zh" else 7104, "Wei", "en")
    found = {}
    for q in questions:
        for user, chat, text in ((asker, None, q), (member, GROUP, f"/vram{AT} {q}")):
            reply = await say(tg, user, text, chat)
            labels = [label for label, _ in buttons(reply)]
            problems = check_first_reply(shown(reply), labels, lang)
            if problems:
                found[(q, chat is not None)] = problems
    assert not found, found


async def test_the_buttons_open_each_part_in_place(tg: FakeTelegram, bot) -> None:
    me = User(7105, "Ann", "en")
    first = await say(tg, me, "train llama3-8b lora")
    message_id = first.result["message_id"]
    seen = {}
    for part, expected in (
        ("Breakdown", "range "),
        ("All picks", "Recommended"),
        ("Assumed", "Assumed:"),
        ("Watch out", "Watch out"),
        ("Details", "How Llama 3 8B adds up"),
    ):
        edit = await press(tg, me, first, part)
        assert edit.method == "editMessageText" and edit.result["message_id"] == message_id
        assert expected in shown(edit), (part, shown(edit)[:200])
        labels = [label for label, _ in buttons(edit)]
        # the part shown gives its place to the way back; the other parts stay
        assert "⬅ Back to answer" in labels and not any(part in label for label in labels)
        seen[part] = shown(edit)
        first = edit
    back = await press(tg, me, first, "Back to answer")
    assert back.result["message_id"] == message_id and utf16_len(shown(back)) <= SHORT_LIMIT
    assert "✅ Fits with" in shown(back)
    # the breakdown names each term in the words the chart uses
    assert "🟦 weights" in seen["Breakdown"] and "🟥 logits" in seen["Breakdown"]


async def test_a_chinese_answer_stays_chinese_when_its_buttons_are_pressed(
    tg: FakeTelegram, bot
) -> None:
    me = User(7106, "Hao", "en")  # Telegram set to English
    first = await say(tg, me, "3090 能跑 glm-4-9b 吗")
    assert "能跑，但偏紧" in shown(first) and "就装得下" in shown(first)
    picks = await press(tg, me, first, "全部推荐")
    assert "其他选择" in shown(picks)
    assert button(picks, "返回结果")
