"""End to end through the bot (the local Bot API stand-in): serving N users, training time,
and preference / RL post-training questions, in private chats and groups, zh and en."""

from __future__ import annotations

from standin import Chat, FakeTelegram, User
from tests.conftest import press, say, shown

LAB = Chat(-100778, "supergroup", "RL lab")


async def test_a_class_of_students_gets_a_serving_plan_in_both_languages(
    tg: FakeTelegram, bot
) -> None:
    en = shown(await say(tg, User(7001, "Bo", "en"), "30 students using qwen2.5-7b at once"))
    assert "for 30 people" in en and "≈9 generating at once" in en
    assert "--max-num-seqs 9" in en and "tok/s per user" in en
    zh = shown(await say(tg, User(7002, "王", "zh-hans"), "30个学生同时用 qwen2.5-7b 要什么卡"))
    assert "服务 30 人" in zh and "约 9 人同时在生成" in zh and "vllm serve" in zh
    assert not [c for c in tg.calls if c.error]


async def test_ten_thousand_users_get_replicas_and_zero_users_a_clear_answer(
    tg: FakeTelegram, bot
) -> None:
    bo = User(7003, "Bo", "en")
    big = shown(await say(tg, bo, "serve llama3-8b to 10000 users"))
    assert "for 10000 people" in big and "replicas ×" in big and len(big) <= 900
    zero = shown(await say(tg, bo, "0 users qwen2.5-7b"))
    assert "must be a whole number from 1" in zero
    zh_zero = shown(await say(tg, User(7004, "王", "zh-hans"), "0 个用户 qwen2.5-7b"))
    assert "用户数" in zh_zero


async def test_a_serving_question_in_a_group_answers_the_member_who_asked(
    tg: FakeTelegram, bot
) -> None:
    reply = await say(tg, User(7005, "Li", "en"), "/vram@GpuAdvisorBot qwen2.5-14b 并发 50", LAB)
    # a question written in Chinese is answered in Chinese (docs/answers.md)
    assert "50 路并发" in shown(reply) and "vllm serve" in shown(reply)
    english = await say(
        tg, User(7005, "Li", "en"), "/vram@GpuAdvisorBot qwen2.5-14b concurrency 50", LAB
    )
    assert "50 concurrent streams" in shown(english) and "vllm serve" in shown(english)


async def test_grpo_is_sized_with_its_method_and_says_why_no_reference_is_loaded(
    tg: FakeTelegram, bot
) -> None:
    first = await say(tg, User(7006, "Bo", "en"), "GRPO qwen2.5-7b full 8xA100")
    assert "GRPO (full policy)" in shown(first)
    # the assumptions are one button away from the first reply (docs/answers.md)
    en = shown(await press(tg, User(7006, "Bo", "en"), first, "Assumed"))
    assert "no separate reference model: the KL weight is 0" in en
    assert "8 completions per prompt" in en
    first = await say(tg, User(7007, "王", "zh-hans"), "用 verl 跑 GRPO qwen2.5-7b")
    assert "GRPO（策略 LoRA）" in shown(first)
    zh = shown(await press(tg, User(7007, "王", "zh-hans"), first, "显存构成"))
    assert "采样生成" in zh


async def test_full_dpo_holds_a_frozen_reference_model(tg: FakeTelegram, bot) -> None:
    bo = User(7008, "Bo", "en")
    first = await say(tg, bo, "full DPO llama3-8b on 4x A100")
    assert "DPO (full policy)" in shown(first)
    assert "reference model (frozen)" in shown(await press(tg, bo, first, "Breakdown"))
    assert "2 sequences per example" in shown(await press(tg, bo, first, "Assumed"))
    bo2 = User(7009, "Bo", "en")
    first = await say(tg, bo2, "DPO llama3-8b lora")
    assert "reference model (frozen)" not in shown(await press(tg, bo2, first, "Breakdown"))
    said = shown(await press(tg, bo2, first, "Assumed"))
    assert "the base with its adapter disabled is the reference" in said


async def test_how_long_a_training_run_takes_in_both_languages(tg: FakeTelegram, bot) -> None:
    en = shown(await say(tg, User(7010, "Bo", "en"), "resnet50 imagenet 90 epochs how long"))
    assert "imagenet × 90 epochs = 115,305,030 images" in en
    assert " h" in en and "whole job ~" in en and "images/s per card" in en
    zh = shown(await say(tg, User(7011, "王", "zh-hans"), "yolov8s coco 训练多久"))
    assert "coco × 100 轮" in zh and "小时" in zh and "整个任务约" in zh
    llm = shown(await say(tg, User(7012, "Bo", "en"), "qwen2.5-7b lora 1b tokens how long"))
    assert "1B tokens" in llm and "MFU" in llm


async def test_absurd_epochs_and_a_missing_data_size_get_clear_answers(
    tg: FakeTelegram, bot
) -> None:
    bo = User(7013, "Bo", "en")
    absurd = shown(await say(tg, bo, "resnet50 imagenet 1000000000 epochs how long"))
    assert "epochs must be from 1 to 100000" in absurd
    vague = shown(await say(tg, bo, "qwen2.5-7b lora how long"))
    assert "depends on how much data" in vague
    group = shown(
        await say(
            tg,
            User(7014, "Li", "zh-hans"),
            "/vram@GpuAdvisorBot resnet18 cifar10 训练 200 轮 几个小时",
            LAB,
        )
    )
    assert "cifar10 × 200 轮" in group


async def test_serve_and_training_time_answer_in_inline_mode(tg: FakeTelegram, bot) -> None:
    from tests.test_inline import _inline

    for language, query, expected in (
        ("en", "30 students qwen2.5-7b", "for 30 people"),
        ("zh-hans", "resnet50 imagenet 训练多久", "imagenet × 90 轮"),
    ):
        call = await _inline(tg, User(7020, "In", language), query)
        assert call.error is None, call.error
        [result] = call.params["results"]
        body = result["input_message_content"]["message_text"]
        assert expected in body and len(body) < 1000, body
