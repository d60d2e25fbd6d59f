"""Small things an operator found: a group's migration in either
order, anonymous admins, a very long /gpu argument, media in a private chat."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from standin import Chat, FakeTelegram, User
from tests.conftest import button, say, settled, shown


async def wait_for_row(db: Path, sql: str, *params: object) -> None:
    """Updates of different users run concurrently: wait until one user's has landed."""
    for _ in range(100):
        con = sqlite3.connect(db)
        found = con.execute(sql, params).fetchall()
        con.close()
        if found:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no row for {sql} {params}")


def messages_to(tg: FakeTelegram, chat_id: int) -> list:
    return [c for c in tg.sent("sendMessage", chat_id) if c.error is None]


async def test_a_supergroup_that_speaks_before_the_migration_notice_keeps_the_language(
    tg: FakeTelegram, bot
) -> None:
    boss = User(9001, "Boss", "en")
    tg.admins.add(boss.id)
    old, new = Chat(-9000, "group", "lab"), Chat(-1009000, "supergroup", "lab")
    menu = await say(tg, boss, "/lang@GpuAdvisorBot", old)
    await tg.reply_to(tg.user_clicks(boss, menu.result, button(menu, "Group default: 中文")))
    tg.supergroup_created_from(boss, new, old.id)  # migrate_from arrives first...
    await wait_for_row(bot.repo.path, "SELECT 1 FROM chats WHERE chat_id = ?", new.id)
    other = User(9002, "Cy", None)
    first = await say(tg, other, "/vram@GpuAdvisorBot 7b", new)
    tg.group_migrates(boss, old, new.id)  # ...then the old group's migrate_to
    later = await say(tg, other, "/vram@GpuAdvisorBot 7b", new)
    assert "每卡显存约" in shown(first) and "每卡显存约" in shown(later)


async def test_an_anonymous_admin_is_answered_and_can_set_the_group_language(
    tg: FakeTelegram, bot
) -> None:
    lab = Chat(-1009100, "supergroup", "lab")
    boss = User(9101, "Boss", "en")
    tg.admins.add(boss.id)
    answer = await tg.reply_to(tg.anonymous_admin_sends(lab, "/vram@GpuAdvisorBot 7b"))
    assert "VRAM per card" in shown(answer)
    menu = await tg.reply_to(tg.anonymous_admin_sends(lab, "/lang@GpuAdvisorBot"))
    # the admin behind "the group" presses the button as themselves
    done = await tg.reply_to(tg.user_clicks(boss, menu.result, button(menu, "Group default: 中文")))
    assert "中文" in shown(done)
    other = User(9102, "Cy", None)
    assert "每卡显存约" in shown(await say(tg, other, "/vram@GpuAdvisorBot 7b", lab))


async def test_a_very_long_gpu_argument_gets_one_message(tg: FakeTelegram, bot) -> None:
    bo = User(9201, "Bo", "en")
    reply = await say(tg, bo, "/gpu " + "<rtx&5090>" * 400)
    assert "I don't know the card" in shown(reply)
    await settled(bot)  # the handler is done: a second part would have been sent
    assert len(messages_to(tg, bo.id)) == 1


async def test_stickers_photos_and_voice_get_a_short_answer_in_the_users_language(
    tg: FakeTelegram, bot
) -> None:
    en, zh = User(9301, "Bo", "en"), User(9302, "Li", "zh-hans")
    for kind in ("sticker", "photo", "voice"):
        reply = await tg.reply_to(tg.user_sends_media(en, kind))
        assert "text" in shown(reply), kind
    reply = await tg.reply_to(tg.user_sends_media(zh, "sticker"))
    assert "文字" in shown(reply)
    assert len(messages_to(tg, en.id)) == 3


async def test_an_unknown_command_in_a_private_chat_gets_the_commands_not_silence(
    tg: FakeTelegram, bot
) -> None:
    en, zh = User(9401, "Bo", "en"), User(9402, "Li", "zh-hans")
    for text in ("/foo", "/0"):
        assert "/help" in shown(await say(tg, en, text))
    assert "不认识这个命令" in shown(await say(tg, zh, "/foo"))
    # in a group, a command for another bot is left alone
    lab = Chat(-9400, "supergroup", "lab")
    tg.user_sends(en, lab, "/foo@OtherBot")
    assert "GPU advisor" in shown(await say(tg, en, "/help@GpuAdvisorBot", lab))
    assert not [c for c in tg.sent("sendMessage", lab.id) if "不认识" in str(c.params)]
