"""Lab mode end to end through the stand-in: admins register a group's machines, members'
questions are answered against them first, non-admins and forged buttons change nothing,
and the machines survive a restart and a group → supergroup migration."""

from __future__ import annotations

from bot.lab_store import lab_store
from standin import Chat, FakeTelegram, User
from tests.conftest import button, buttons, halt, launch, press, say, shown

GROUP = Chat(-1005550001, "supergroup", "NLP lab")
BOSS = User(5101, "Boss", "en")
MEMBER = User(5102, "Mia", "en")
AT = "@GpuAdvisorBot"


async def _register(tg: FakeTelegram) -> None:
    tg.admins.add(BOSS.id)
    listing = await say(
        tg, BOSS, f"/lab{AT} node1 4x a100 40g ¥3/h shared, book in the sheet", GROUP
    )
    assert "Saved: node1" in shown(listing)
    # the second machine through the ➕ button and a reply to the prompt
    prompt_update = tg.user_clicks(BOSS, listing.result, button(listing, "Add a machine"))
    prompt = await tg.wait_for(
        lambda c: c.method == "sendMessage" and "reply to this message" in c.result["text"]
    )
    assert prompt.params["reply_markup"]["force_reply"] is True
    # addressed to the admin: a mention link, not its escaped text
    assert f'<a href="tg://user?id={BOSS.id}">Boss</a>, reply' in prompt.params["text"]
    assert prompt_update is not None
    saved = await say(tg, BOSS, "两台 3090 工作站", GROUP, reply_to=prompt.result)
    assert "Saved: RTX 3090-1, RTX 3090-2" in shown(saved)


async def test_an_admin_registers_machines_and_a_members_question_is_answered_against_them(
    tg: FakeTelegram, bot
) -> None:
    await _register(tg)
    listing = shown(await say(tg, MEMBER, f"/lab{AT}", GROUP))
    assert "node1: 4× A100 40GB SXM4 · ¥3 per card-hour · shared, book in the sheet" in (listing)
    assert "Only the group's admins can change" in listing

    first = await say(tg, MEMBER, f"/vram{AT} 13b fp16", GROUP)
    fits = shown(first)
    assert fits.startswith("🏠 Our machines")
    assert "Use node1 (4× A100 40GB SXM4): ✅ Fits on 1 of its 4 cards" in fits
    # the first reply names the machine to use; every machine's line is with all the picks
    assert "RTX 3090-1 (1×" not in fits and "2 more of the machines" in fits
    picks = shown(await press(tg, MEMBER, first, "All picks"))
    assert "RTX 3090-1 (1× GeForce RTX 3090): ✅ Fits with weights quantized to int8" in picks
    assert picks.index("Our machines") < picks.index("Recommended")  # renting follows

    many = shown(await say(tg, MEMBER, f"/vram{AT} llama-3.3-70b fp16", GROUP))
    assert "Use node1" in many and "on 4 of its 4 cards" in many

    small = shown(await say(tg, MEMBER, f"/vram{AT} qwen2.5-7b int4", GROUP))
    assert "Use RTX 3090-1" in small  # the smallest machine that runs it: node1 stays free

    none_call = await say(tg, MEMBER, f"/vram{AT} llama-3.1-405b fp16", GROUP)
    none = shown(none_call)
    assert "None of the group's machines runs this as asked" in none and "Renting instead" in none
    every = shown(await press(tg, MEMBER, none_call, "All picks"))
    assert "Does not fit even on all 4 cards" in every


async def test_a_non_admin_can_read_but_not_change_the_machines(tg: FakeTelegram, bot) -> None:
    await _register(tg)
    refused = shown(await say(tg, MEMBER, f"/lab{AT} mine 8x h100", GROUP))
    assert "Only this group's admins can change its machines" in refused
    refused = shown(await say(tg, MEMBER, f"/lab{AT} rm node1", GROUP))
    assert "Only this group's admins" in refused
    listing = await say(tg, MEMBER, f"/lab{AT}", GROUP)
    click = tg.user_clicks(MEMBER, listing.result, button(listing, "✖ node1"))
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert "Only the group's admins" in alert.params["text"]
    names = [m.name for m in await lab_store(bot.repo).machines(GROUP.id)]
    assert names == ["RTX 3090-1", "RTX 3090-2", "node1"]
    # every check above asked Telegram for the admin list once: it is kept for a minute
    assert len(tg.sent("getChatAdministrators", GROUP.id)) == 1


async def test_a_forged_callback_changes_nothing(tg: FakeTelegram, bot) -> None:
    await _register(tg)
    other = Chat(-1005550002, "supergroup", "Vision lab")
    rival = User(5103, "Rex", "en")
    tg.admins.add(rival.id)  # an admin, but of the other group, pressing crafted data
    node1 = next(m for m in await lab_store(bot.repo).machines(GROUP.id) if m.name == "node1")
    own = await say(tg, rival, f"/lab{AT}", other)
    for data in (f"m|{node1.id}|r", f"m|{node1.id}|e", "m|0|z", "m|x|r", "m|0|d|extra"):
        click = tg.user_clicks(rival, own.result, data)
        await tg.wait_for(
            lambda c, q=click: (
                c.method == "answerCallbackQuery"
                and c.params["callback_query_id"] == q["callback_query"]["id"]
            )
        )
    assert len(await lab_store(bot.repo).machines(GROUP.id)) == 3  # node1 still there
    # and a real remove button pressed by a member of the right group who is no admin
    listing = await say(tg, MEMBER, f"/lab{AT}", GROUP)
    tg.admins.discard(BOSS.id)
    tg.user_clicks(MEMBER, listing.result, f"m|{node1.id}|r")
    await tg.wait_for(lambda c: c.method == "answerCallbackQuery" and c.params.get("show_alert"))
    assert len(await lab_store(bot.repo).machines(GROUP.id)) == 3


async def test_an_admin_removes_and_replaces_machines(tg: FakeTelegram, bot) -> None:
    await _register(tg)
    listing = await say(tg, BOSS, f"/lab{AT}", GROUP)
    removed = await press(tg, BOSS, listing, "✖ RTX 3090-2")
    assert "Removed: RTX 3090-2" in shown(removed) and "RTX 3090-2:" not in shown(removed)
    replaced = shown(await say(tg, BOSS, f"/lab{AT} node1 8x a100 80g", GROUP))
    assert "node1: 8× A100 80GB" in replaced
    gone = shown(await say(tg, BOSS, f"/lab{AT} rm RTX 3090-1", GROUP))
    assert "Removed: RTX 3090-1" in gone
    assert [m.name for m in await lab_store(bot.repo).machines(GROUP.id)] == ["node1"]


async def test_an_edit_that_renames_a_machine_replaces_it(tg: FakeTelegram, bot) -> None:
    await _register(tg)
    node1 = next(m for m in await lab_store(bot.repo).machines(GROUP.id) if m.name == "node1")
    listing = await say(tg, BOSS, f"/lab{AT}", GROUP)
    tg.user_clicks(BOSS, listing.result, f"m|{node1.id}|e")
    prompt = await tg.wait_for(
        lambda c: c.method == "sendMessage" and "replaces this machine" in c.result["text"]
    )
    saved = shown(await say(tg, BOSS, "gpu-a 8x a100 80g", GROUP, reply_to=prompt.result))
    assert "gpu-a: 8× A100 80GB" in saved and "node1:" not in saved
    names = sorted(m.name for m in await lab_store(bot.repo).machines(GROUP.id))
    assert names == ["RTX 3090-1", "RTX 3090-2", "gpu-a"]
    # the prompt was used: a second reply to it adds, it does not replace again
    await say(tg, BOSS, "node9 2x 4090", GROUP, reply_to=prompt.result)
    assert len(await lab_store(bot.repo).machines(GROUP.id)) == 4


async def test_machines_survive_a_restart_and_a_group_migration(
    tg: FakeTelegram, bot, settings
) -> None:
    old = Chat(-5550003, "group", "Old lab")
    tg.admins.add(BOSS.id)
    await say(tg, BOSS, f"/lab{AT} node1 4x a100 40g", old)
    await halt(tg, bot)
    again = await launch(settings)
    try:
        assert "Use node1" in shown(await say(tg, MEMBER, f"/vram{AT} 13b fp16", old))
        tg.group_migrates(BOSS, old, -1005550003)
        new = Chat(-1005550003, "supergroup", "Old lab")
        listing = shown(await say(tg, MEMBER, f"/lab{AT}", new))
        assert "node1: 4× A100 40GB SXM4" in listing
        assert "Use node1" in shown(await say(tg, MEMBER, f"/vram{AT} 13b fp16", new))
        assert await lab_store(again.repo).machines(old.id) == []
    finally:
        await halt(tg, again)


async def test_removing_the_bot_deletes_the_groups_machines(tg: FakeTelegram, bot) -> None:
    await _register(tg)
    tg.bot_removed(BOSS, GROUP)
    marker = await say(tg, MEMBER, "/help")  # updates run in order per user; wait on a later one
    assert marker is not None
    for _ in range(50):
        if not await lab_store(bot.repo).machines(GROUP.id):
            break
        await __import__("asyncio").sleep(0.05)
    assert await lab_store(bot.repo).machines(GROUP.id) == []


async def test_forget_in_a_group_explains_and_lets_only_an_admin_delete_the_groups_machines(
    tg: FakeTelegram, bot
) -> None:
    await _register(tg)
    confirm = await say(tg, MEMBER, f"/forget{AT}", GROUP)
    assert "That is per person" in shown(confirm) and "3 machine(s)" in shown(confirm)
    click = tg.user_clicks(MEMBER, confirm.result, button(confirm, "Delete this group's machines"))
    await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert len(await lab_store(bot.repo).machines(GROUP.id)) == 3
    confirm = await say(tg, BOSS, f"/forget{AT}", GROUP)
    done = await press(tg, BOSS, confirm, "Delete this group's machines")
    assert "Deleted 3 machine(s) of this group" in shown(done)
    assert await lab_store(bot.repo).machines(GROUP.id) == []


async def test_in_a_private_chat_lab_keeps_the_users_own_cards(tg: FakeTelegram, bot) -> None:
    wang = User(5104, "王", "zh-hans")
    saved = shown(await say(tg, wang, "/lab 我的电脑 4090"))
    assert "已保存：我的电脑" in saved and "你自己的显卡" in saved
    answer = shown(await say(tg, wang, "14b int4 推理"))
    assert answer.startswith("🏠 你自己的显卡") and "用 我的电脑" in answer
    confirm = await say(tg, wang, "/forget")
    assert "你自己的显卡（私聊中的 /lab）" in shown(confirm)
    done = await press(tg, wang, confirm, "确定")
    assert "另外删除了你登记的 1 台机器" in shown(done)
    assert await lab_store(bot.repo).machines(wang.id) == []


async def test_the_guided_conversation_offers_our_machines_as_a_budget(
    tg: FakeTelegram, bot
) -> None:
    await _register(tg)
    menu = await say(tg, MEMBER, f"/start{AT}", GROUP)
    step = await press(tg, MEMBER, menu, "Run an LLM")
    step = await press(tg, MEMBER, step, "Qwen2.5-7B")
    while not any("Our machines" in t for t, _ in buttons(step)):
        step = await press(tg, MEMBER, step, "Skip")
    answer = await press(tg, MEMBER, step, "Our machines")
    assert shown(answer).startswith("🏠 Our machines (you chose them)")
    # a group without machines is not offered the choice
    bare = Chat(-1005550009, "supergroup", "No machines")
    menu = await say(tg, MEMBER, f"/start{AT}", bare)
    step = await press(tg, MEMBER, menu, "Run an LLM")
    step = await press(tg, MEMBER, step, "Qwen2.5-7B")
    while "budget" not in shown(step).lower():
        step = await press(tg, MEMBER, step, "Skip")
    assert not any("Our machines" in t for t, _ in buttons(step))


async def test_in_a_forum_topic_the_add_prompt_stays_in_the_topic(tg: FakeTelegram, bot) -> None:
    forum = Chat(-1005550010, "supergroup", "Forum lab", is_forum=True)
    tg.admins.add(BOSS.id)
    listing = await say(tg, BOSS, f"/lab{AT}", forum, thread_id=77)
    assert listing.params.get("reply_parameters")  # a reply: Telegram keeps it in the topic
    tg.user_clicks(BOSS, listing.result, button(listing, "Add a machine"))
    prompt = await tg.wait_for(
        lambda c: (
            c.method == "sendMessage"
            and "reply to this message" in (c.result or {}).get("text", "")
        )
    )
    assert int(prompt.params["message_thread_id"]) == 77


async def test_an_anonymous_admin_can_register_machines(tg: FakeTelegram, bot) -> None:
    saved = await tg.reply_to(tg.anonymous_admin_sends(GROUP, f"/lab{AT} node9 2x l40s"))
    assert "Saved: node9" in shown(saved)
    assert [m.name for m in await lab_store(bot.repo).machines(GROUP.id)] == ["node9"]


async def test_help_names_lab_and_inline_mode(tg: FakeTelegram, bot) -> None:
    text = shown(await say(tg, MEMBER, f"/help{AT}", GROUP))
    assert f"/lab{AT}" in text and f"{AT} 13b fp16" in text
