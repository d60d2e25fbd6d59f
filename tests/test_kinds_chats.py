"""Every kind of question end to end through the bot (the real application against the local
Bot API stand-in), in the places it is asked: a private chat, a group by
`/vram@GpuAdvisorBot`, a forum topic, where the reply stays in the topic, and inline mode,
where it is one result to share (small talk offers the private chat instead). Each reply is
the kind's own answer, in the asker's language, at most 900 visible characters."""

from __future__ import annotations

import pytest

from standin import Chat, FakeTelegram, User
from tests.conftest import say, shown
from tests.test_inline import _inline

GROUP = Chat(-100779001, "supergroup", "GPU lab")
FORUM = Chat(-100779002, "supergroup", "Lab forum", is_forum=True)
TOPIC = 77
FIRST_REPLY_LIMIT = 900

ZH = User(7301, "王", "zh-hans")
EN = User(7302, "Bo", "en")

# (kind, user, line, what the kind's answer says)
KINDS = [
    ("fit", EN, "qwen2.5-14b lora on a 3090", ["Qwen2.5 14B", "GeForce RTX 3090"]),
    ("capability", ZH, "我的3080能跑什么", ["能跑什么", "GGUF Q4_K_M"]),
    ("purchase", ZH, "课题组有15万经费，想买服务器做大模型微调", ["预算 ¥150,000", "合计", "回本"]),
    ("purchase", EN, "should I buy 2x 4090 or rent an A100 for a year", ["renting 1× A100"]),
    ("serve", ZH, "30个同学同时用，部署 qwen2.5-14b 要什么卡", ["服务 30 人", "vllm serve"]),
    (
        "serve",
        EN,
        "serve 50 concurrent users with llama 3.1 8b",
        ["50 concurrent", "--max-num-seqs"],
    ),
    (
        "train_time",
        ZH,
        "resnet50 在 imagenet 上训练要多久，用 4 张 3090",
        ["imagenet × 90 轮", "小时"],
    ),
    (
        "train_time",
        EN,
        "how long to train yolov8m on coco with one 4090",
        ["coco × 100 epochs", " h"],
    ),
    ("compare", EN, "A6000 vs 2x 3090 for qwen2.5-14b", ["2× GeForce RTX 3090 vs RTX A6000"]),
    ("compare", ZH, "4090还是3090", ["对比", "能跑："]),
    ("rl", EN, "DPO fine-tune llama3-8b full parameters on 4x A100", ["DPO (full policy)"]),
    ("rl", ZH, "用 GRPO 训练 qwen2.5-7b 需要多少显存", ["GRPO（策略 LoRA）"]),
    ("owned", EN, "M4 Pro 24G run qwen2.5-14b", ["Apple M4 Pro 24GB", "llama.cpp"]),
    ("owned", ZH, "v100 16g 能微调 qwen2.5-7b 吗", ["Tesla V100 16GB", "QLoRA"]),
    ("out_of_scope", ZH, "今天天气怎么样", ["这个问题我答不了", "可以这样问"]),
    ("out_of_scope", EN, "book me a flight to Shanghai tomorrow", ["outside what I answer"]),
]
IDS = [f"{kind}-{user.language_code}" for kind, user, _, _ in KINDS]


def _check(text: str, line: str, expected: list[str]) -> None:
    for part in expected:
        assert part in text, (line, part, text)
    assert len(text) <= FIRST_REPLY_LIMIT, (line, len(text))
    assert "Traceback" not in text


@pytest.mark.parametrize(("kind", "user", "line", "expected"), KINDS, ids=IDS)
async def test_each_kind_is_answered_in_a_private_chat(
    tg: FakeTelegram, bot, kind: str, user: User, line: str, expected: list[str]
) -> None:
    _check(shown(await say(tg, user, line)), line, expected)
    assert not [c for c in tg.calls if c.error]


@pytest.mark.parametrize(("kind", "user", "line", "expected"), KINDS, ids=IDS)
async def test_each_kind_is_answered_in_a_group_by_command(
    tg: FakeTelegram, bot, kind: str, user: User, line: str, expected: list[str]
) -> None:
    reply = await say(tg, user, f"/vram@GpuAdvisorBot {line}", GROUP)
    assert reply.params["chat_id"] == GROUP.id
    _check(shown(reply), line, expected)


@pytest.mark.parametrize(("kind", "user", "line", "expected"), KINDS, ids=IDS)
async def test_each_kind_is_answered_in_its_forum_topic(
    tg: FakeTelegram, bot, kind: str, user: User, line: str, expected: list[str]
) -> None:
    reply = await say(tg, user, f"/vram@GpuAdvisorBot {line}", FORUM, thread_id=TOPIC)
    assert int(reply.params["message_thread_id"]) == TOPIC
    _check(shown(reply), line, expected)


@pytest.mark.parametrize(("kind", "user", "line", "expected"), KINDS, ids=IDS)
async def test_each_kind_is_answered_inline(
    tg: FakeTelegram, bot, kind: str, user: User, line: str, expected: list[str]
) -> None:
    call = await _inline(tg, user, line)
    assert call.error is None, call.error
    if kind == "out_of_scope":  # nothing to share: the button opens the private chat
        assert call.params["results"] == [] and call.params["button"]["start_parameter"]
        return
    [result] = call.params["results"]
    text = result["input_message_content"]["message_text"]
    assert expected[0] in text, (line, text)
    assert len(text) < 4096
