"""The database as files on disk: permissions, damage, backups to odd paths, /forget
leaving nothing in the WAL, a group's migration in either order."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from bot.schema import StorageError, backup_database
from bot.storage import Repository


async def _question(repo: Repository, user_id: int, text: str, chat_id: int | None = None) -> int:
    return await repo.add_history(
        user_id=user_id,
        chat_id=chat_id if chat_id is not None else user_id,
        raw_text=text,
        canonical=None,
        workload=None,
        summary=None,
        catalog_version="v",
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_new_database_and_its_folder_are_private_to_the_owner(tmp_path: Path) -> None:
    db = tmp_path / "data" / "bot.sqlite3"
    repo = await Repository.open(db)
    await _question(repo, 1, "q")
    assert _mode(db.parent) == 0o700
    for suffix in ("", "-wal", "-shm"):
        assert _mode(db.with_name(db.name + suffix)) == 0o600, suffix
    await repo.close()


async def test_a_world_readable_database_from_before_is_made_private(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    sqlite3.connect(db).close()
    db.chmod(0o644)
    repo = await Repository.open(db)
    assert _mode(db) == 0o600
    await repo.close()


async def test_a_missing_data_folder_is_said_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo = await Repository.open(tmp_path / "gone" / "bot.sqlite3")
    await repo.close()
    assert "data folder" in caplog.text and "does not exist" in caplog.text
    assert "starting a new, empty one" in caplog.text


async def test_a_damaged_database_is_refused_at_open(tmp_path: Path) -> None:
    db = tmp_path / "damaged.sqlite3"
    repo = await Repository.open(db)
    for i in range(300):
        await _question(repo, i, f"question number {i} " * 20)
    await repo.close()
    page = sqlite3.connect(db).execute("PRAGMA page_size").fetchone()[0]
    with db.open("r+b") as f:  # scribble over a page in the middle of the history table
        f.seek(page * 20)
        f.write(b"\xff" * page)
    with pytest.raises(StorageError, match="damaged|malformed"):
        await Repository.open(db)


@pytest.mark.parametrize("name", ["with #hash.sqlite3", "what?.sqlite3", "100%.sqlite3"])
async def test_backup_works_for_any_characters_in_the_path(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "a #b?c %d"
    folder.mkdir()
    db = folder / name
    repo = await Repository.open(db)
    await _question(repo, 1, "kept")
    target = folder / f"copy {name}"
    backup_database(db, target)
    await repo.close()
    assert _mode(target) == 0o600
    con = sqlite3.connect(target)
    assert con.execute("SELECT raw_text FROM history").fetchall() == [("kept",)]
    con.close()


async def test_forget_leaves_the_text_in_neither_the_database_nor_the_wal(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    repo = await Repository.open(db)
    secret = "my-private-thesis-topic-" * 4
    await _question(repo, 7, secret)
    await _question(repo, 8, "someone else")
    deleted = await repo.forget_user(7)
    assert deleted["questions"] == 1
    files = [db, db.with_name(db.name + "-wal")]
    assert all(secret.encode() not in f.read_bytes() for f in files if f.exists())
    assert await repo.count_history() == 1
    await repo.close()


@pytest.mark.parametrize("supergroup_first", [False, True])
async def test_a_group_upgraded_to_a_supergroup_keeps_its_language_in_either_order(
    tmp_path: Path, supergroup_first: bool
) -> None:
    repo = await Repository.open(tmp_path / "g.sqlite3")
    await repo.seen(1, "a", "en", -100, "group", "lab")
    await repo.set_chat_language(-100, "zh")
    await _question(repo, 1, "asked in the group", chat_id=-100)
    if supergroup_first:  # the supergroup's first message came before the migration notice
        await repo.seen(1, "a", "en", -1001, "supergroup", "lab")
    await repo.migrate_chat(-100, -1001)
    await repo.migrate_chat(-100, -1001)  # both service messages arrive: harmless twice
    assert await repo.language_choices(1, -1001) == (None, "zh")
    assert [e.raw_text for e in await repo.recent_history(1, -1001)] == ["asked in the group"]
    assert await repo.language_choices(1, -100) == (None, None)
    await repo.close()
