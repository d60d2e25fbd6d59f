"""The guided conversation, end to end: the real application through the Bot API stand-in."""

from __future__ import annotations

from standin import Chat, FakeTelegram, User
from tests.conftest import button, buttons, press, say, settled, shown


async def test_whole_guided_conversation_in_english_edits_one_message(
    tg: FakeTelegram, bot
) -> None:
    ann = User(1001, "Ann", "en")
    menu = await say(tg, ann, "/start")
    assert "What do you want to do?" in shown(menu)
    step = await press(tg, ann, menu, "Run an LLM")
    assert step.method == "editMessageText" and "Step 1/5: Model" in shown(step)
    step = await press(tg, ann, step, "Qwen2.5-7B")
    assert "Step 2/5" in shown(step) and "✓ Model: Qwen2.5-7B" in shown(step)
    step = await press(tg, ann, step, "INT8")
    step = await press(tg, ann, step, "32k")
    step = await press(tg, ann, step, "Skip")  # batch: the engine's default
    assert "Step 5/5: Budget" in shown(step)
    answer = await press(tg, ann, step, "¥10/h")
    text = shown(answer)
    assert answer.method == "editMessageText"
    assert answer.result["message_id"] == menu.result["message_id"]  # one message, edited in place
    # a fit: plain, or by the estimate with the band's high end over the card said beside it
    fits = "✅ Fits" in text or "Fits by the estimate" in text
    assert "VRAM per card" in text and fits and len(text) <= 900  # the short reply
    assert "Qwen2.5 7B · inference · int8 · context 32k" in text
    assert "¥" in text  # the budget's currency is used for prices
    assert any("Details" in label for label, _ in buttons(answer))
    picks = await press(tg, ann, answer, "All picks")
    assert "Recommended" in shown(picks)
    breakdown = await press(tg, ann, picks, "Breakdown")
    assert "KV cache" in shown(breakdown)
    await settled(bot)
    rows = await bot.repo.recent_history(1001, 1001)
    assert len(rows) == 1 and rows[0].canonical.startswith(
        "qwen2.5-7b · int8 · inference · ctx 32768"
    )


async def test_whole_guided_conversation_in_chinese(tg: FakeTelegram, bot) -> None:
    li = User(1002, "李雷", "zh-hans")
    menu = await say(tg, li, "/start")
    assert "你想做什么" in shown(menu)
    step = await press(tg, li, menu, "LoRA 微调")
    step = await press(tg, li, step, "Llama-3.1-8B")
    assert "第 2/6 步：LoRA 秩" in shown(step)
    step = await press(tg, li, step, "r=16")
    step = await press(tg, li, step, "2k")
    step = await press(tg, li, step, "100M tokens")
    step = await press(tg, li, step, "3")
    answer = await press(tg, li, step, "跳过")
    text = shown(answer)
    assert "每卡显存约" in text and "装得下" in text
    assert "小时" in text  # 300M tokens: a training time is given
    breakdown = await press(tg, li, answer, "显存构成")
    assert "模型权重" in shown(breakdown)


async def test_typed_answer_is_parsed_and_fills_the_steps_it_names(tg: FakeTelegram, bot) -> None:
    ann = User(1003, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    typed = await say(tg, ann, "llama-3.1-8b int4 32k")
    # precision and context were in the text: the next question is the batch
    assert typed.method == "sendMessage" and "Step 4/5: Batch" in shown(typed)
    # the old menu lost its buttons: one live menu
    retired = tg.messages[(1003, step.result["message_id"])]
    assert "reply_markup" not in retired


async def test_typed_unknown_model_explains_and_stays_on_the_step(tg: FakeTelegram, bot) -> None:
    ann = User(1004, "Ann", "en")
    menu = await say(tg, ann, "/start")
    await press(tg, ann, menu, "Run an LLM")
    reply = await say(tg, ann, "llama-9-900b")
    assert "I don't know the model" in shown(reply) and "Step 1/5: Model" in shown(reply)


async def test_a_whole_question_typed_at_the_first_step_is_answered(tg: FakeTelegram, bot) -> None:
    ann = User(1005, "Ann", "en")
    await say(tg, ann, "/start")
    answer = await say(tg, ann, "qwen2.5-14b awq on 4090")
    assert "1× GeForce RTX 4090 (your setup)" in shown(answer)


async def test_back_returns_to_the_previous_step_and_cancel_ends(tg: FakeTelegram, bot) -> None:
    ann = User(1006, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Image generation")
    step = await press(tg, ann, step, "SDXL")
    assert "Step 2/5: Precision" in shown(step)
    step = await press(tg, ann, step, "Back")
    assert "Step 1/5: Image model" in shown(step) and "✓" not in shown(step)
    step = await press(tg, ann, step, "Back")
    assert "What do you want to do?" in shown(step)
    done = await press(tg, ann, step, "Cancel")
    assert "Cancelled" in shown(done)
    # a button of the finished menu is refused politely
    old = tg.user_clicks(ann, menu.result, "w|1006|c|model_image|1")
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == old["callback_query"]["id"]
        )
    )
    assert "expired" in alert.params["text"]


async def test_cancel_command_inside_and_outside_a_conversation(tg: FakeTelegram, bot) -> None:
    ann = User(1007, "Ann", "en")
    await say(tg, ann, "/start")
    assert "Cancelled" in shown(await say(tg, ann, "/cancel"))
    assert "Nothing to cancel" in shown(await say(tg, ann, "/cancel"))


async def test_rendering_task_gets_the_guides_table(tg: FakeTelegram, bot) -> None:
    ann = User(1008, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "3D rendering")
    answer = await press(tg, ann, step, "Skip")
    assert "No VRAM formula exists" in shown(answer) and "Guide:" in shown(answer)


async def test_answer_buttons_change_precision_and_show_details(tg: FakeTelegram, bot) -> None:
    ann = User(1009, "Ann", "en")
    answer = await say(tg, ann, "/vram qwen2.5-72b bf16")
    menu = await press(tg, ann, answer, "Precision")
    assert menu.method == "editMessageText" and "AWQ" in [t for t, _ in buttons(menu)]
    changed = await press(tg, ann, menu, "AWQ")
    assert "Qwen2.5 72B · inference · awq-4bit" in shown(changed)
    details = await press(tg, ann, changed, "Details")
    assert "How Qwen2.5 72B adds up" in shown(details) and "weights" in shown(details)
    back = await press(tg, ann, details, "Back to answer")
    assert "VRAM per card" in shown(back)
    card = await press(tg, ann, back, "Card")
    on_card = await press(tg, ann, card, "RTX 4090")
    assert "1× GeForce RTX 4090 (your setup)" in shown(on_card)
    budget = await press(tg, ann, on_card, "Budget")
    cheap = await press(tg, ann, budget, "$1/h")
    assert "$" in shown(cheap)
    await settled(bot)
    assert len(await bot.repo.recent_history(1009, 1009)) == 4  # the question and three changes


async def test_new_question_button_starts_a_fresh_wizard_below_the_answer(
    tg: FakeTelegram, bot
) -> None:
    ann = User(1010, "Ann", "en")
    answer = await say(tg, ann, "/vram 7b")
    fresh = await press(tg, ann, answer, "New question")
    assert fresh.method == "sendMessage" and "What do you want to do?" in shown(fresh)
    assert (
        "VRAM per card" in tg.messages[(1010, answer.result["message_id"])]["text"]
    )  # answer kept


async def test_free_text_in_private_chat_is_a_question(tg: FakeTelegram, bot) -> None:
    ann = User(1011, "Ann", "en")
    assert "VRAM per card" in shown(await say(tg, ann, "13b fp16"))


async def test_private_wizard_and_group_wizard_of_one_member_are_separate(
    tg: FakeTelegram, bot
) -> None:
    ann = User(1012, "Ann", "en")
    lab = Chat(-100500, "supergroup", "Lab")
    private = await say(tg, ann, "/start")
    group = await say(tg, ann, "/start@GpuAdvisorBot", lab)
    step = await press(tg, ann, private, "Run an LLM")
    assert "Step 1/5" in shown(step)
    gstep = await press(tg, ann, group, "Image generation")
    assert "Step 1/5: Image model" in shown(gstep)
    assert button(step, "Qwen2.5-7B") != button(gstep, "SDXL")


async def test_a_model_typed_at_a_later_step_replaces_the_model(tg: FakeTelegram, bot) -> None:
    ann = User(1013, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-7B")
    typed = await say(tg, ann, "llama-3.1-8b int4")
    assert "✓ Model: llama-3.1-8b int4" in shown(typed) and "Qwen2.5-7B" not in shown(typed)
    assert "Step 3/5: Context" in shown(typed)


async def test_a_choice_that_does_not_fit_the_model_is_explained_on_its_step(
    tg: FakeTelegram, bot
) -> None:
    ann = User(1014, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await say(tg, ann, "llama-2-13b")  # 4k context at most, no longer sibling
    step = await press(tg, ann, step, "BF16")
    refused = await press(tg, ann, step, "128k")
    assert "longer than the model supports" in shown(refused) and "Step 3/5: Context" in shown(
        refused
    )
    again = await press(
        tg, ann, refused, "128k"
    )  # same press, same page: answered, nothing new to show
    assert again.error is not None and "not modified" in again.error
    step = await press(tg, ann, refused, "4k")
    assert "Step 4/5" in shown(step)


async def test_each_skippable_step_states_its_default(tg: FakeTelegram, bot) -> None:
    ann = User(1015, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-7B")
    assert "skip for BF16" in shown(step)
    step = await press(tg, ann, step, "Skip")
    assert "skip for 4k" in shown(step)


async def test_the_stated_default_is_what_the_engine_assumes_for_that_model(
    tg: FakeTelegram, bot
) -> None:
    ann = User(1016, "Ann", "en")
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await press(tg, ann, step, "DeepSeek-V3")
    assert "skip for FP8" in shown(step)  # DeepSeek-V3 ships in fp8, not bf16
    image = await press(tg, ann, await say(tg, ann, "/start"), "Image generation")
    image = await press(tg, ann, image, "SDXL")
    image = await press(tg, ann, image, "Skip")
    assert "skip for 1024x1024" in shown(image)


async def test_a_total_budget_button_picks_the_job_that_fits_it(tg: FakeTelegram, bot) -> None:
    li = User(1017, "李", "zh-hans")
    step = await press(tg, li, await say(tg, li, "/start"), "LoRA 微调")
    for label in ("Llama-3.1-8B", "跳过", "跳过", "100M tokens", "跳过"):
        step = await press(tg, li, step, label)
    answer = await press(tg, li, step, "总预算 ¥200")
    assert "总共 ≤ ¥200" in shown(answer) and "小时" in shown(answer)


async def test_a_skipped_step_shows_the_default_it_left_in_place(tg: FakeTelegram, bot) -> None:
    ann = User(1018, "Ann", "en")
    step = await press(tg, ann, await say(tg, ann, "/start"), "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-7B")
    step = await press(tg, ann, step, "Skip")
    assert "✓ Precision / quantization: default (BF16)" in shown(step)


def test_every_step_field_in_wizard_toml_exists_in_the_engine() -> None:
    from advisor.models.workload import Workload
    from bot.choices import wizard_spec

    for name, step in wizard_spec()["steps"].items():
        fills = step.get("fills")
        assert fills is None or fills == "budget" or fills in Workload.model_fields, name


async def test_an_unchanged_edit_still_leaves_pressable_buttons(tg: FakeTelegram, bot) -> None:
    ann = User(1019, "Ann", "en")
    step = await press(tg, ann, await say(tg, ann, "/start"), "Run an LLM")
    step = await say(tg, ann, "llama-2-13b")
    step = await press(tg, ann, step, "BF16")
    refused = await press(tg, ann, step, "128k")
    again = await press(tg, ann, refused, "128k")
    assert (
        "not modified" in again.error and again.result["message_id"] == refused.result["message_id"]
    )
    assert "Step 4/5" in shown(await press(tg, ann, again, "4k"))
