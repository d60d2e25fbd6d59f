"""Follow-ups and typed wizard answers, end to end through the Bot API stand-in: a message
after an answer changes that answer's question (private chats: any message; groups: a
reply to the answer), and a typed answer in the guided conversation lands on its step."""

from __future__ import annotations

from standin import Chat, FakeTelegram, User
from tests.conftest import buttons, press, say, settled, shown

LAB = Chat(-100991, "supergroup", "GPU lab")


async def _canonicals(bot, user: User, chat_id: int) -> list[str]:
    """The questions answered, oldest first, as the answers stored them."""
    await settled(bot)
    return [row.canonical for row in await bot.repo.recent_history(user.id, chat_id)][::-1]


async def _last(bot, user: User, chat_id: int) -> str:
    return (await _canonicals(bot, user, chat_id))[-1]


async def test_private_follow_ups_in_english_change_the_last_question(
    tg: FakeTelegram, bot
) -> None:
    ann = User(3001, "Ann", "en")
    first = await say(tg, ann, "qwen2.5-14b awq on a 3090")
    assert "1× GeForce RTX 3090 (your setup)" in shown(first)
    more = await say(tg, ann, "what about 2 cards")
    assert "Qwen2.5 14B · inference · awq-4bit" in shown(more)
    assert "2× GeForce RTX 3090 (your setup)" in shown(more)
    batch = await say(tg, ann, "batch 16")
    assert "batch 16" in shown(batch) and "2× GeForce RTX 3090 (your setup)" in shown(batch)
    card = await say(tg, ann, "switch to an L40S")
    assert "awq-4bit" in shown(card) and "batch 16" in shown(card) and "L40S" in shown(card)
    assert await _canonicals(bot, ann, ann.id) == [
        "qwen2.5-14b · awq-4bit · inference · on gpu:rtx-3090",
        "qwen2.5-14b · awq-4bit · inference · 2 gpus · on gpu:rtx-3090",
        "qwen2.5-14b · awq-4bit · inference · batch 16 · 2 gpus · on gpu:rtx-3090",
        "qwen2.5-14b · awq-4bit · inference · batch 16 · 2 gpus · on gpu:l40s",
    ]


async def test_private_follow_ups_in_chinese_change_format_card_and_concurrency(
    tg: FakeTelegram, bot
) -> None:
    li = User(3002, "李雷", "zh-hans")
    first = await say(tg, li, "用 vllm 部署 qwen2.5-14b 单卡 4090")
    assert "Qwen2.5 14B · 推理" in shown(first) and "RTX 4090（你的配置）" in shown(first)
    await say(tg, li, "换成 int4")
    assert await _last(bot, li, li.id) == (
        "qwen2.5-14b · int4 · inference · 1 gpus · vllm · on gpu:rtx-4090"
    )
    # "并发" asks how it serves 8 at once: the serving plan, which the next change follows
    served = await say(tg, li, "并发改成 8")
    assert "服务 8 路并发" in shown(served) and "RTX 4090" in shown(served)
    last = await say(tg, li, "用 3090 呢")
    assert "int4" in shown(last) and "GeForce RTX 3090" in shown(last)
    rows = await _canonicals(bot, li, li.id)
    assert rows[-1] == (
        "qwen2.5-14b · int4 · inference · concurrency 8 · batch 8 · 1 gpus · vllm · on gpu:rtx-3090"
    )


async def test_a_new_question_after_an_answer_is_not_merged_into_it(tg: FakeTelegram, bot) -> None:
    ann = User(3003, "Ann", "en")
    await say(tg, ann, "qwen2.5-72b awq on 2x A100")
    fresh = await say(tg, ann, "llama-3.1-8b int8")
    assert "Llama 3.1 8B · inference · int8" in shown(fresh) and "your setup" not in shown(fresh)
    rows = await _canonicals(bot, ann, ann.id)
    assert rows[-1] == "llama-3.1-8b · int8 · inference"


async def test_a_follow_up_at_a_context_the_model_lacks_suggests_a_sibling(
    tg: FakeTelegram, bot
) -> None:
    ann = User(3004, "Ann", "en")
    await say(tg, ann, "llama-3-8b on a 4090")
    reply = await say(tg, ann, "ctx 32k")
    assert "longer than the model supports" in shown(reply) and "llama-3.1-8b" in shown(reply)


async def test_in_a_group_a_reply_to_an_answer_changes_that_question(tg: FakeTelegram, bot) -> None:
    wang, bo = User(3005, "王", "zh-hans"), User(3006, "Bo", "en")
    answer = await say(tg, wang, "/vram@GpuAdvisorBot qwen2.5-7b lora on 4090", LAB)
    assert "Qwen2.5 7B · LoRA 微调" in shown(answer)
    changed = await say(tg, wang, "换成 qlora", LAB, reply_to=answer.result)
    assert "Qwen2.5 7B · QLoRA" in shown(changed) and "nf4" in shown(changed)
    assert await _last(bot, wang, LAB.id) == "qwen2.5-7b · nf4 · qlora · on gpu:rtx-4090"
    # someone else replying to the same answer changes the question it answered, not theirs
    other = await say(tg, bo, "what about 2 cards", LAB, reply_to=answer.result)
    assert "Qwen2.5 7B · LoRA" in shown(other) and "2× GeForce RTX 4090" in shown(other)
    assert await _last(bot, bo, LAB.id) == "qwen2.5-7b · lora · 2 gpus · on gpu:rtx-4090"
    # a plain group message (no reply) never reaches the bot in privacy mode
    assert tg.user_sends(wang, LAB, "batch 16") is None


async def test_in_a_group_a_reply_to_a_non_answer_is_a_new_question(tg: FakeTelegram, bot) -> None:
    bo = User(3007, "Bo", "en")
    helped = await say(tg, bo, "/help@GpuAdvisorBot", LAB)
    reply = await say(tg, bo, "batch 16", LAB, reply_to=helped.result)
    assert "Which model, or how big?" in shown(reply)


# --- typed answers in the guided conversation ---------------------------------------------


async def test_a_bare_number_typed_at_the_batch_step_is_the_batch(tg: FakeTelegram, bot) -> None:
    ann = User(3008, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-7B")
    step = await press(tg, ann, step, "INT8")
    step = await press(tg, ann, step, "8k")
    typed = await say(tg, ann, "16")
    assert "Step 5/5: Budget" in shown(typed) and "concurrent requests: 16" in shown(typed)
    answer = await press(tg, ann, typed, "$1/h")
    assert "Qwen2.5 7B · inference · int8 · context 8k · batch 16" in shown(answer)
    assert (await _last(bot, ann, ann.id)).startswith(
        "qwen2.5-7b · int8 · inference · ctx 8192 · batch 16"
    )


async def test_a_precision_typed_at_the_context_step_goes_to_the_precision(
    tg: FakeTelegram, bot
) -> None:
    ann = User(3009, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-7B")
    step = await press(tg, ann, step, "BF16")
    assert "Step 3/5: Context" in shown(step)
    typed = await say(tg, ann, "awq")
    assert "✓ Precision / quantization: awq" in shown(typed)
    assert "Step 3/5: Context" in shown(typed) and "Context length: awq" not in shown(typed)
    step = await say(tg, ann, "32k")
    assert "Step 4/5: Batch" in shown(step)
    step = await press(tg, ann, step, "Skip")
    answer = await press(tg, ann, step, "$1/h")
    assert "Qwen2.5 7B · inference · awq-4bit · context 32k" in shown(answer)


async def test_typed_wizard_answers_in_chinese(tg: FakeTelegram, bot) -> None:
    li = User(3010, "李雷", "zh-hans")
    menu = await say(tg, li, "/start")
    await press(tg, li, menu, "LoRA 微调")
    typed = await say(tg, li, "千问 14b")
    assert "第 2/6 步：LoRA 秩" in shown(typed)
    typed = await say(tg, li, "64")
    assert "✓ LoRA 秩：64" in shown(typed) and "第 3/6 步：训练序列长度" in shown(typed)
    typed = await say(tg, li, "4k")
    typed = await say(tg, li, "100m")
    typed = await say(tg, li, "2")
    answer = await press(tg, li, typed, "跳过")
    assert shown(answer).startswith("Qwen2.5 14B · LoRA 微调")  # the model "千问 14b" was read as
    assert await _last(bot, li, li.id) == (
        "qwen2.5-14b · lora · ctx 4096 · rank 64 · data 200000000 tokens"
    )


async def test_in_a_group_a_typed_precision_at_the_context_step_lands_on_the_precision(
    tg: FakeTelegram, bot
) -> None:
    wang = User(3011, "王", "zh-hans")
    menu = await say(tg, wang, "/start@GpuAdvisorBot", LAB)
    step = await press(tg, wang, menu, "运行大模型")
    step = await press(tg, wang, step, "Qwen2.5-7B")
    step = await press(tg, wang, step, "BF16")
    assert "第 3/5 步" in shown(step)
    tg.user_clicks(wang, step.result, [d for t, d in buttons(step) if "✏️" in t][0])
    prompt = await tg.wait_for(
        lambda c: (
            c.method == "sendMessage" and "force_reply" in (c.params.get("reply_markup") or {})
        )
    )
    typed = await say(tg, wang, "awq", LAB, reply_to=prompt.result)
    assert "✓ 精度 / 量化：awq" in shown(typed) and "上下文长度：awq" not in shown(typed)
    assert "第 3/5 步：上下文长度" in shown(typed)


async def test_two_cards_for_a_task_after_a_serving_plan_is_a_new_question(
    tg: FakeTelegram, bot
) -> None:
    """A card comparison after a serving plan was merged into the plan: "Qwen2.5 32B · nf4
    服务 50 人 … KV 缓存：每条序列 0.0 GiB" (review of 2026-12-07)."""
    li = User(3011, "李雷", "zh-hans")
    await say(tg, li, "部署 qwen2.5-32b 给实验室50个人同时用 vllm 要什么卡")
    compared = await say(tg, li, "4090 和 a100 40g 哪个适合跑微调")
    text = shown(compared)
    assert "Qwen2.5 32B" not in text and "服务 50 人" not in text and "0.0 GiB" not in text
    assert "GeForce RTX 4090 对比 A100 40GB SXM4" in text, text


async def test_fine_tuning_asked_after_a_serving_plan_drops_the_plan_s_users(
    tg: FakeTelegram, bot
) -> None:
    li = User(3012, "李雷", "zh-hans")
    await say(tg, li, "部署 qwen2.5-32b 给实验室50个人同时用 vllm 要什么卡")
    tuned = await say(tg, li, "lora 呢")
    text = shown(tuned)
    assert "Qwen2.5 32B" in text and "服务 50 人" not in text and "0.0 GiB" not in text
    assert await _last(bot, li, li.id) == "qwen2.5-32b · lora"


async def test_a_card_no_one_sells_after_an_answer_is_named_not_the_last_answer_again(
    tg: FakeTelegram, bot
) -> None:
    li = User(3013, "李雷", "zh-hans")
    await say(tg, li, "部署 qwen2.5-32b 给实验室50个人同时用 vllm 要什么卡")
    text = shown(await say(tg, li, "RTX 5090Ti 128G 能跑啥"))
    assert "Qwen2.5 32B" not in text and "rtx 5090ti" in text and "128 GB" in text, text


async def test_a_card_swapped_after_what_can_it_run_asks_what_the_new_card_runs(
    tg: FakeTelegram, bot
) -> None:
    """ "两张3090能跑什么" then "那换成4090呢" was answered "哪个模型？": the capability answer
    was not kept, so the follow-up had nothing to change."""
    han = User(3011, "韩梅梅", "zh-hans")
    first = await say(tg, han, "两张3090能跑什么")
    assert "2× GeForce RTX 3090 能跑什么" in shown(first)
    swapped = await say(tg, han, "那换成4090呢")
    assert "2× GeForce RTX 4090 能跑什么" in shown(swapped), shown(swapped)
    assert "哪个模型" not in shown(swapped)
    assert await _last(bot, han, han.id) == "what can i run · 2 gpus · on gpu:rtx-4090"
    # a measurement typed after it has no one job to be held against: said so
    report = await say(tg, han, "实测 21.3G")
    assert "没有显存估算" in shown(report), shown(report)
    model = await say(tg, han, "qwen2.5-14b呢")
    assert "Qwen2.5 14B" in shown(model) and "RTX 4090" in shown(model), shown(model)
    ann = User(3012, "Ann", "en")
    await say(tg, ann, "what can I do with 2x 3090")
    typed = await say(tg, ann, "measured 21.3G")
    assert "no memory figure" in shown(typed), shown(typed)
    other = await say(tg, ann, "what about an a6000")
    assert "RTX A6000" in shown(other) and "Which model" not in shown(other), shown(other)
