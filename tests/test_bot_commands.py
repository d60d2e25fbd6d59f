"""Every command, group chats, forum topics, and what goes wrong on the wire."""

from __future__ import annotations

import asyncio

import pytest

from advisor import catalog
from standin import Chat, FakeTelegram, User
from tests.conftest import ADMIN_ID, buttons, press, say, settled, shown

LAB = Chat(-100777, "supergroup", "GPU lab")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/vram 13B fp16", "VRAM per card"),
        ("/vram", "answers in one line"),
        ("/vram llama-9-900b", "I don't know the model"),
        ("/gpus", f"GPUs ({len(catalog.gpus())})"),  # every card, owned and Apple's too
        ("/gpus 24g", "with at least 24 GB"),
        ("/gpus a100", "A100"),
        ("/gpus zzz", "None."),
        ("/gpu 4090", "What fits"),
        ("/gpu", "Which card?"),
        ("/gpu rtx 9999", "I don't know the card"),
        ("/fit a100 80g", "Longest context"),
        ("/fit 2x3090", "What fits on 2×"),
        ("/history", "No questions from you"),
        ("/lang", "Choose your language"),
        ("/help", "/vram"),
        ("/about", "Where the numbers come from"),
        ("/forget", "Delete everything"),
        ("/stats", "for the bot's admins"),
        ("/cancel", "Nothing to cancel"),
    ],
)
async def test_every_command_answers_in_valid_telegram_html(
    tg: FakeTelegram, bot, command: str, expected: str
) -> None:
    reply = await say(tg, User(2001, "Bo", "en"), command)
    assert expected in shown(reply)
    assert not [c for c in tg.calls if c.error], (
        "the stand-in rejected a reply (HTML, length or button data)"
    )


async def test_commands_answer_in_chinese_for_a_chinese_telegram_user(
    tg: FakeTelegram, bot
) -> None:
    wang = User(2002, "王", "zh-hans")
    assert "每卡显存约" in shown(await say(tg, wang, "/vram 13B fp16"))
    assert "能跑什么" in shown(await say(tg, wang, "/gpu 4090"))
    assert "数据从哪里来" in shown(await say(tg, wang, "/about"))


async def test_asking_what_a_card_can_run_answers_with_its_fit_list(tg: FakeTelegram, bot) -> None:
    """ "4090 能跑什么模型" / "biggest model I can run on a 4090": the /fit answer, not
    "which model?"."""
    assert "What fits on" in shown(
        await say(tg, User(2031, "Bo", "en"), "what's the biggest model I can run on a 4090")
    )
    wang = User(2032, "王", "zh-hans")
    # the capability answer holds /fit's table (its inference and fine-tuning lines) and adds
    # the chat (GGUF) and image routes
    asked = shown(await say(tg, wang, "4090 能跑什么模型"))
    table = shown(await say(tg, wang, "/fit 4090"))
    for line in table.splitlines():
        if line.startswith(("• 推理", "• 微调")):
            assert line in asked
    assert "GGUF Q4_K_M" in asked and "画图" in asked


async def test_asking_the_biggest_model_for_a_memory_size_answers_per_precision(
    tg: FakeTelegram, bot
) -> None:
    """ "biggest model on 24G" / "24g显存最大能跑多大的模型": the fit list of a card with that
    memory (BF16 / INT8 / INT4 sizes), not "which model?"."""
    en = shown(await say(tg, User(2033, "Bo", "en"), "biggest model on 24G"))
    assert "What fits on 24 GB GPU" in en and "BF16 8B" in en
    zh = shown(await say(tg, User(2034, "王", "zh-hans"), "24g显存最大能跑多大的模型"))
    assert "24 GB GPU 能跑什么" in zh and "INT4" in zh


async def test_command_menus_are_set_for_private_and_group_chats_in_both_languages(
    tg: FakeTelegram, bot
) -> None:
    private_zh = {c["command"]: c["description"] for c in tg.commands[("all_private_chats", "zh")]}
    private_en = {c["command"]: c["description"] for c in tg.commands[("all_private_chats", "en")]}
    group_default = [c["command"] for c in tg.commands[("all_group_chats", "")]]
    assert private_zh["vram"].startswith("快速估算") and private_en["vram"].startswith(
        "Quick estimate"
    )
    assert set(private_zh) == set(private_en)
    assert "forget" in private_en and "forget" not in group_default and "vram" in group_default


async def test_lang_switches_the_reply_language(tg: FakeTelegram, bot) -> None:
    bo = User(2003, "Bo", "en")
    menu = await say(tg, bo, "/lang")
    done = await press(tg, bo, menu, "中文")
    assert "中文" in shown(done)
    assert "每卡显存约" in shown(await say(tg, bo, "/vram 7b"))


async def test_group_default_language_needs_an_admin(tg: FakeTelegram, bot) -> None:
    bo, boss = User(2004, "Bo", "en"), User(2005, "Boss", "en")
    tg.admins.add(boss.id)
    menu = await say(tg, bo, "/lang@GpuAdvisorBot", LAB)
    tg.user_clicks(bo, menu.result, [d for t, d in buttons(menu) if "Group default: 中文" in t][0])
    refused = await tg.wait_for(
        lambda c: c.method == "answerCallbackQuery" and c.params.get("show_alert")
    )
    assert "Only group admins" in refused.params["text"]
    menu = await say(tg, boss, "/lang@GpuAdvisorBot", LAB)
    await press(tg, boss, menu, "Group default: 中文")
    other = User(2006, "Cy", None)  # no Telegram language: the group's default applies
    assert "每卡显存约" in shown(await say(tg, other, "/vram@GpuAdvisorBot 7b", LAB))


async def test_admin_sees_stats(tg: FakeTelegram, bot) -> None:
    boss = User(ADMIN_ID, "Boss", "en")
    await say(tg, boss, "/vram qwen2.5-7b")
    stats = shown(await say(tg, boss, "/stats"))
    assert "questions 1" in stats and "qwen2.5-7b (1)" in stats


async def test_history_lists_questions_and_asks_again(tg: FakeTelegram, bot) -> None:
    bo = User(2007, "Bo", "en")
    await say(tg, bo, "/vram qwen2.5-7b int4")
    await say(tg, bo, "/vram 13b fp16")
    listing = await say(tg, bo, "/history")
    assert "1. 13b · fp16 · inference" in shown(listing) and "2. qwen2.5-7b · int4" in shown(
        listing
    )
    again = await press(tg, bo, listing, "↻ 2")
    assert "Qwen2.5 7B · inference · int4" in shown(again)
    await settled(bot)
    assert len(await bot.repo.recent_history(bo.id, bo.id)) == 3


async def test_forget_deletes_after_confirmation_and_says_what(tg: FakeTelegram, bot) -> None:
    bo = User(2008, "Bo", "en")
    await say(tg, bo, "/vram 7b")
    await say(tg, bo, "/vram 13b")
    confirm = await say(tg, bo, "/forget")
    kept = await press(tg, bo, confirm, "No, keep it")
    assert "Nothing deleted" in shown(kept)
    assert len(await bot.repo.recent_history(bo.id, bo.id)) == 2
    confirm = await say(tg, bo, "/forget")
    done = await press(tg, bo, confirm, "Yes, delete")
    assert "Deleted 2 question(s)" in shown(done)
    assert await bot.repo.recent_history(bo.id, bo.id) == []
    assert await bot.repo.user(bo.id) is None


# --- groups ---


async def test_vram_addressed_to_the_bot_in_a_group_is_answered_quoting_the_asker(
    tg: FakeTelegram, bot
) -> None:
    bo = User(2010, "Bo", "en")
    update = tg.user_sends(bo, LAB, "/vram@GpuAdvisorBot 13B fp16")
    reply = await tg.reply_to(update)
    assert "VRAM per card" in shown(reply)
    assert reply.params["reply_parameters"]["message_id"] == update["message"]["message_id"]


async def test_commands_for_another_bot_and_plain_group_chatter_are_ignored(
    tg: FakeTelegram, bot
) -> None:
    bo = User(2011, "Bo", "en")
    assert tg.user_sends(bo, LAB, "hello everyone") is None  # privacy mode: never delivered
    tg.user_sends(bo, LAB, "/vram@OtherBot 13B")
    marker = tg.user_sends(bo, LAB, "/help@GpuAdvisorBot")
    reply = await tg.reply_to(marker)
    assert "In groups" in shown(reply)
    assert len(tg.sent("sendMessage", LAB.id)) == 1  # only /help was answered


async def test_two_members_run_wizards_in_one_group_at_the_same_time(tg: FakeTelegram, bot) -> None:
    ann, bo = User(2012, "Ann", "en"), User(2013, "Bo", "zh-hans")
    menu_a, menu_b = await asyncio.gather(
        say(tg, ann, "/start@GpuAdvisorBot", LAB), say(tg, bo, "/start@GpuAdvisorBot", LAB)
    )
    step_a, step_b = await asyncio.gather(
        press(tg, ann, menu_a, "Run an LLM"), press(tg, bo, menu_b, "AI 画图")
    )
    step_a, step_b = await asyncio.gather(
        press(tg, ann, step_a, "Llama-3.3-70B"), press(tg, bo, step_b, "FLUX.1-dev")
    )
    assert "✓ Model: Llama-3.3-70B" in shown(step_a) and "✓ 画图模型：FLUX.1-dev" in shown(step_b)
    assert step_a.result["message_id"] == menu_a.result["message_id"]
    assert step_b.result["message_id"] == menu_b.result["message_id"]


async def test_pressing_another_members_button_is_refused_politely_and_changes_nothing(
    tg: FakeTelegram, bot
) -> None:
    ann, bo = User(2014, "Ann", "en"), User(2015, "Bo", "en")
    menu = await say(tg, ann, "/start@GpuAdvisorBot", LAB)
    edits_before = len(tg.sent("editMessageText"))
    click = tg.user_clicks(bo, menu.result, [d for t, d in buttons(menu) if "Run an LLM" in t][0])
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert (
        alert.params["text"].startswith("This menu belongs to Ann")
        and alert.params["show_alert"] is True
    )
    answer = await say(tg, bo, "/vram@GpuAdvisorBot 7b", LAB)  # Bo is served normally meanwhile
    click = tg.user_clicks(ann, answer.result, [d for t, d in buttons(answer) if "Details" in t][0])
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert alert.params["text"].startswith("This menu belongs to Bo")
    assert len(tg.sent("editMessageText")) == edits_before
    assert "What do you want to do?" in tg.messages[(LAB.id, menu.result["message_id"])]["text"]


async def test_group_wizard_takes_typed_answers_through_force_reply(tg: FakeTelegram, bot) -> None:
    ann = User(2016, "Ann", "en")
    menu = await say(tg, ann, "/start@GpuAdvisorBot", LAB)
    step = await press(tg, ann, menu, "Run an LLM")
    assert "tap ✏️" in shown(step)
    tg.user_clicks(ann, step.result, [d for t, d in buttons(step) if "Type it" in t][0])
    prompt = await tg.wait_for(
        lambda c: (
            c.method == "sendMessage" and "force_reply" in (c.params.get("reply_markup") or {})
        )
    )
    assert (
        prompt.params["reply_markup"]["selective"] is True
        and "tg://user?id=2016" in prompt.params["text"]
    )
    assert tg.user_sends(ann, LAB, "qwen2.5-32b") is None  # plain text: privacy mode hides it
    reply = await say(tg, ann, "qwen2.5-32b", LAB, reply_to=prompt.result)
    assert "✓ Model: qwen2.5-32b" in shown(reply) and "Step 2/5" in shown(reply)


async def test_forum_topic_replies_stay_in_the_topic(tg: FakeTelegram, bot) -> None:
    forum = Chat(-100888, "supergroup", "Lab forum", is_forum=True)
    ann = User(2017, "Ann", "en")
    reply = await say(tg, ann, "/vram@GpuAdvisorBot 7b", forum, thread_id=42)
    assert int(reply.params["message_thread_id"]) == 42
    menu = await say(tg, ann, "/start@GpuAdvisorBot", forum, thread_id=42)
    assert int(menu.params["message_thread_id"]) == 42
    tg.user_clicks(ann, menu.result, [d for t, d in buttons(menu) if "Type it" in t][0])
    prompt = await tg.wait_for(
        lambda c: (
            c.method == "sendMessage" and "force_reply" in (c.params.get("reply_markup") or {})
        )
    )
    assert int(prompt.params["message_thread_id"]) == 42


async def test_group_upgraded_to_supergroup_keeps_its_history(tg: FakeTelegram, bot) -> None:
    old = Chat(-4001, "group", "Old lab")
    ann = User(2018, "Ann", "en")
    await say(tg, ann, "/vram@GpuAdvisorBot 7b", old)
    tg.group_migrates(ann, old, -1004001)
    new = Chat(-1004001, "supergroup", "Old lab")
    listing = await say(tg, ann, "/history@GpuAdvisorBot", new)
    assert "1. 7b · inference" in shown(listing)


# --- the wire ---


async def test_a_429_is_retried_after_retry_after(tg: FakeTelegram, bot) -> None:
    tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    reply = await say(tg, User(2020, "Bo", "en"), "/vram 7b")
    assert "VRAM per card" in shown(reply)
    assert [c.error for c in tg.sent("sendMessage")] == ["injected 429", None]


async def test_hostile_model_name_comes_back_escaped(tg: FakeTelegram, bot) -> None:
    reply = await say(tg, User(2021, "Bo", "en"), "/vram llama<b>& 7b")
    assert "llama<b>&" in shown(reply)  # visible as typed: it was escaped, and Telegram parsed it
    assert "llama&lt;b&gt;&amp;" in reply.params["text"]


async def test_a_user_who_blocked_the_bot_does_not_stop_it_serving_others(
    tg: FakeTelegram, bot
) -> None:
    gone, bo = User(2022, "Gone", "en"), User(2023, "Bo", "en")
    tg.blocked_users.add(gone.id)
    tg.user_sends(gone, text="/vram 7b")
    blocked = await tg.wait_for(lambda c: c.error and "blocked" in c.error)
    assert blocked.method == "sendMessage"
    assert "VRAM per card" in shown(await say(tg, bo, "/vram 7b"))


async def test_a_failing_handler_gets_an_apology_not_a_traceback(
    tg: FakeTelegram, bot, monkeypatch
) -> None:
    import bot.commands as commands

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(commands, "card_fit", boom)
    reply = await say(tg, User(2024, "Bo", "zh-hans"), "/gpu 4090")
    assert shown(reply).startswith("抱歉，我这边出错了") and "Traceback" not in shown(reply)


@pytest.mark.parametrize(
    "data",
    [
        "w|2025|c|bogus|99",
        "zzz",
        "a|999999|p",
        "c|1|f|999",
        "w|2025|t|nope",
        "l|2025|u|fr",
        "f|2025|maybe",
    ],
)
async def test_forged_or_stale_buttons_are_refused(tg: FakeTelegram, bot, data: str) -> None:
    bo = User(2025, "Bo", "en")
    answer = await say(tg, bo, "/vram 7b")
    click = tg.user_clicks(bo, answer.result, data)
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert "expired" in alert.params.get("text", "expired")
    assert "VRAM per card" in shown(await say(tg, bo, "/vram 7b"))


async def test_a_button_whose_handler_fails_still_gets_an_apology(
    tg: FakeTelegram, bot, monkeypatch
) -> None:
    import bot.answer as answer

    bo = User(2026, "Bo", "en")
    reply = await say(tg, bo, "/vram 7b")

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(answer, "compute", boom)
    tg.user_clicks(bo, reply.result, [d for t, d in buttons(reply) if "Details" in t][0])
    sorry = await tg.wait_for(
        lambda c: c.method == "sendMessage" and "Sorry" in c.params.get("text", "")
    )
    assert str(sorry.params["chat_id"]) == str(bo.id)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/vram llama-9-900b", "我不认识模型"),
        ("/vram", "一句话就能问"),
        ("/gpus 24g", "显存 ≥ 24 GB"),
        ("/gpu rtx 9999", "我不认识显卡"),
        ("/fit 2x3090", "能跑什么"),
        ("/history", "还没有提问"),
        ("/help", "在群里"),
        ("/stats", "只对机器人管理员开放"),
        ("/forget", "要删除我保存的"),
        ("/lang", "选择语言"),
    ],
)
async def test_commands_in_a_group_in_chinese_quote_the_asker(
    tg: FakeTelegram, bot, command: str, expected: str
) -> None:
    """The other language and the group path of each command: addressed with @BotName,
    answered in Chinese, quoting the member who asked."""
    name, _, rest = command.partition(" ")
    update = tg.user_sends(User(2030, "王", "zh-hans"), LAB, f"{name}@GpuAdvisorBot {rest}".strip())
    reply = await tg.reply_to(update)
    assert expected in shown(reply)
    assert reply.params["reply_parameters"]["message_id"] == update["message"]["message_id"]


async def test_details_and_foreign_button_alerts_in_chinese(tg: FakeTelegram, bot) -> None:
    wang, li = User(2031, "王", "zh-hans"), User(2032, "李", "zh-hans")
    answer = await say(tg, wang, "/vram@GpuAdvisorBot qwen2.5-7b", LAB)
    details = await press(tg, wang, answer, "详细解释")
    assert "的显存是怎么算的" in shown(details)
    click = tg.user_clicks(
        li, details.result, [d for t, d in buttons(details) if "返回结果" in t][0]
    )
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert alert.params["text"].startswith("这个菜单属于 王")


async def test_typing_prompt_in_a_group_in_chinese(tg: FakeTelegram, bot) -> None:
    wang = User(2033, "王", "zh-hans")
    step = await press(tg, wang, await say(tg, wang, "/start@GpuAdvisorBot", LAB), "运行大模型")
    tg.user_clicks(wang, step.result, [d for t, d in buttons(step) if "手动输入" in t][0])
    prompt = await tg.wait_for(
        lambda c: (
            c.method == "sendMessage" and "force_reply" in (c.params.get("reply_markup") or {})
        )
    )
    assert "请直接回复这条消息" in prompt.params["text"]
    assert prompt.params["reply_markup"]["input_field_placeholder"].startswith("例如")


async def test_a_chinese_answer_can_switch_to_every_platform_and_back(
    tg: FakeTelegram, bot
) -> None:
    """Chinese answers rank China-payable platforms first; the platforms button re-ranks by
    price alone over every platform, and the other button brings the usual order back."""
    wang = User(2031, "王", "zh-hans")
    answer = await say(tg, wang, "/vram qwen2.5-7b")
    assert "矩池云" in shown(answer)  # the top pick's platform, payable from China
    everywhere = await press(tg, wang, answer, "🌐 全部平台")
    assert everywhere.method == "editMessageText"
    assert "全部平台只按价格排序" in shown(everywhere)  # the picks, re-ranked
    back = await press(tg, wang, everywhere, "🏠 国内平台优先")
    picks = await press(tg, wang, back, "🛒 全部推荐")
    assert "优先列国内可付款的平台" in shown(picks)
