"""Storage against real SQLite files in a temporary folder."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from bot.history_store import HISTORY_ID_BLOCK
from bot.schema import MIGRATIONS_DIR, StorageError, backup_database
from bot.storage import Repository
from standin import FakeTelegram, User
from tests.conftest import halt, launch, make_settings, press, say, shown

HOSTILE = [
    "'; DROP TABLE history; --",
    'Robert"); DELETE FROM users WHERE ("1"="1',
    "<b>&amp;</b> \\x00 \x00 nul",
    "🚀" * 1024,  # 4 kB of emoji
    "\u202eRTL override\u202c and \ud7ff\ue000 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "line\r\nbreaks\n\ttabs",
]


def _migrations(
    tmp_path: Path, upto: int | None = None, extra: tuple[str, str] | None = None
) -> Path:
    """A copy of the shipped migrations (the first `upto` of them), plus one more after them
    named `<next number>_<extra[0]>.sql` holding extra[1]."""
    folder = tmp_path / f"migrations-{upto}-{extra[0] if extra else ''}"
    folder.mkdir()
    shipped = sorted(MIGRATIONS_DIR.glob("*.sql"))[:upto]
    for f in shipped:
        (folder / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    if extra:
        (folder / f"{_number(shipped[-1]) + 1:04d}_{extra[0]}.sql").write_text(
            extra[1], encoding="utf-8"
        )
    return folder


def _number(migration: Path) -> int:
    return int(migration.name[:4])


SHIPPED_FILES = sorted(MIGRATIONS_DIR.glob("*.sql"))
SHIPPED = _number(SHIPPED_FILES[-1])  # the highest number shipped (numbers may skip one)


def _set_created_at(db: Path, history_id: int, created_at: str) -> None:
    """Age a question from a second connection (the repository holds no lock between writes)."""
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE history SET created_at = ? WHERE id = ?", (created_at, history_id))
    con.close()


async def test_migrations_from_empty_create_every_table_and_record_the_version(
    tmp_path: Path,
) -> None:
    repo = await Repository.open(tmp_path / "a.sqlite3")
    assert await repo.schema_version() == SHIPPED
    await repo.close()
    con = sqlite3.connect(tmp_path / "a.sqlite3")
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"users", "chats", "history", "ptb_state", "inbox", "schema_migrations"} <= tables
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


@pytest.mark.parametrize("start", range(1, len(SHIPPED_FILES)))
async def test_each_earlier_version_is_migrated_forward_keeping_its_rows(
    tmp_path: Path, start: int
) -> None:
    db = tmp_path / "b.sqlite3"
    repo = await Repository.open(db, migrations_dir=_migrations(tmp_path, upto=start))
    assert await repo.schema_version() == _number(SHIPPED_FILES[start - 1])
    await repo.add_history(
        user_id=1,
        chat_id=1,
        raw_text="7b",
        canonical="7b · inference",
        workload={},
        summary={},
        catalog_version="v",
    )
    await repo.close()
    repo = await Repository.open(db)  # this code's migrations
    assert await repo.schema_version() == SHIPPED
    assert (await repo.recent_history(1, 1))[0].raw_text == "7b"
    await repo.inbox_add([{"update_id": 5, "message": {"text": "hi"}}])  # 0002's table works
    assert await repo.inbox_pending() == [{"update_id": 5, "message": {"text": "hi"}}]
    await repo.close()


async def test_a_database_from_the_future_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite3"
    newer = _migrations(tmp_path, extra=("x", "CREATE TABLE x (a INTEGER);"))
    repo = await Repository.open(db, migrations_dir=newer)
    await repo.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with pytest.raises(StorageError, match=f"schema version {SHIPPED + 1}, newer than this code"):
        await Repository.open(db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


async def test_a_migration_numbered_below_one_already_applied_is_applied_when_it_lands(
    tmp_path: Path,
) -> None:
    """Numbers are taken before their files land: a database that ran 0006 before 0005
    existed gets 0005 when it ships (not skipped because 6 > 5)."""
    db = tmp_path / "gap.sqlite3"
    folder = tmp_path / "gap"
    folder.mkdir()
    (folder / "0001_a.sql").write_text("CREATE TABLE a (x INTEGER);", encoding="utf-8")
    (folder / "0003_c.sql").write_text("CREATE TABLE c (x INTEGER);", encoding="utf-8")
    repo = await Repository.open(db, migrations_dir=folder)
    assert await repo.schema_version() == 3
    await repo.close()
    (folder / "0002_b.sql").write_text("CREATE TABLE b (x INTEGER);", encoding="utf-8")
    repo = await Repository.open(db, migrations_dir=folder)
    await repo.close()
    con = sqlite3.connect(db)
    assert [r[0] for r in con.execute("SELECT version FROM schema_migrations ORDER BY 1")] == [
        1,
        2,
        3,
    ]
    assert con.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'").fetchone()[0] == 1
    con.close()


async def test_a_failed_migration_stops_start_up_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite3"
    repo = await Repository.open(db)
    await repo.close()
    broken = _migrations(
        tmp_path, extra=("broken", "CREATE TABLE half (a INTEGER);\nTHIS IS NOT SQL;")
    )
    with pytest.raises(StorageError, match=f"{SHIPPED + 1:04d}_broken.sql failed"):
        await Repository.open(db, migrations_dir=broken)
    con = sqlite3.connect(db)
    assert con.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == SHIPPED
    assert con.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'").fetchone()[0] == 0
    con.close()


async def test_an_unwritable_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StorageError, match="cannot open database"):
        await Repository.open(blocker / "db.sqlite3")


@pytest.mark.parametrize("text", HOSTILE)
async def test_hostile_text_is_stored_and_read_back_byte_for_byte(
    tmp_path: Path, text: str
) -> None:
    repo = await Repository.open(tmp_path / "e.sqlite3")
    hid = await repo.add_history(
        user_id=7,
        chat_id=-7,
        raw_text=text,
        canonical=text,
        workload={"model": text},
        summary={"model": text},
        catalog_version="v",
    )
    entry = await repo.history_entry(hid)
    assert entry is not None
    assert entry.raw_text.encode("utf-8", "surrogatepass") == text.encode("utf-8", "surrogatepass")
    assert entry.workload == {"model": text} and entry.canonical == text
    await repo.close()


async def test_hundred_concurrent_users_lose_no_row_and_never_see_locked(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    repos = [await Repository.open(db) for _ in range(4)]  # four connections contend for the file

    async def user(i: int) -> None:
        repo = repos[i % len(repos)]
        for k in range(5):
            await repo.seen(i, f"u{i}", "en", i, "private", None)
            await repo.add_history(
                user_id=i,
                chat_id=i,
                raw_text=f"q{k}",
                canonical=None,
                workload=None,
                summary=None,
                catalog_version="v",
                update_id=i * 10 + k,
            )

    await asyncio.gather(*(user(i) for i in range(100)))
    assert await repos[0].count_history() == 500
    assert len(await repos[1].recent_history(42, 42, limit=50)) == 5
    for r in repos:
        await r.close()


async def _question(repo: Repository, raw: str, update_id: int, entry_id: int | None = None) -> int:
    """One user's question in their private chat, stored as an answer stores it."""
    return await repo.add_history(
        user_id=1,
        chat_id=1,
        raw_text=raw,
        canonical=None,
        workload=None,
        summary=None,
        catalog_version="v",
        update_id=update_id,
        entry_id=entry_id,
    )


async def test_a_redelivered_update_adds_no_second_row(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "g.sqlite3")
    first = await _question(repo, "a", 99)
    again = await _question(repo, "a", 99)
    # one row, under the id the second answer's buttons carry; the first id names nothing
    assert first != again and await repo.count_history() == 1
    assert (await repo.history_entry(again)) is not None
    assert await repo.history_entry(first) is None
    await repo.close()


async def test_history_ids_are_never_handed_out_twice_across_restarts(tmp_path: Path) -> None:
    """Ids reserved by a process that dies before writing their rows are not reused: a
    button sent with one of them must not come to name another question."""
    path = tmp_path / "ids.sqlite3"
    repo = await Repository.open(path)
    handed = [await repo.reserve_history_id() for _ in range(3)]
    assert handed == [1, 2, 3]  # a fresh database starts at 1, one after another
    stored = await _question(repo, "a", 1, entry_id=handed[1])
    assert stored == handed[1] and (await repo.history_entry(stored)).raw_text == "a"
    await repo.close()  # like a kill: the other two ids never got rows
    repo = await Repository.open(path)
    later = await _question(repo, "b", 2)
    assert later == HISTORY_ID_BLOCK + 1  # past the whole block the first process reserved
    await repo.close()


async def test_a_new_block_is_reserved_when_one_runs_out(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "b.sqlite3")
    # many answers at once, some of them asking while the next block is being reserved
    ids = await asyncio.gather(*(repo.reserve_history_id() for _ in range(HISTORY_ID_BLOCK + 2)))
    assert sorted(ids) == list(range(1, HISTORY_ID_BLOCK + 3))
    more = await asyncio.gather(*(repo.reserve_history_id() for _ in range(HISTORY_ID_BLOCK)))
    assert len(set(ids) | set(more)) == 2 * HISTORY_ID_BLOCK + 2
    await repo.close()


async def test_retention_purges_only_old_questions(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    repo = await Repository.open(db)
    for day in ("2020-01-01T00:00:00+00:00", "2099-01-01T00:00:00+00:00"):
        hid = await repo.add_history(
            user_id=1,
            chat_id=1,
            raw_text=day,
            canonical=None,
            workload=None,
            summary=None,
            catalog_version="v",
        )
        _set_created_at(db, hid, day)
    assert await repo.purge_history(180) == 1
    assert [e.raw_text[:4] for e in await repo.recent_history(1, 1)] == ["2099"]
    await repo.close()


async def test_backup_of_a_live_database_is_consistent_and_restorable(tmp_path: Path) -> None:
    db = tmp_path / "live.sqlite3"
    repo = await Repository.open(db)
    for i in range(20):
        await repo.add_history(
            user_id=i,
            chat_id=i,
            raw_text=f"q{i}",
            canonical=None,
            workload=None,
            summary=None,
            catalog_version="v",
        )
    copy = tmp_path / "copy.sqlite3"
    backup_database(db, copy)  # while `repo` still holds the file open
    await repo.close()
    restored = await Repository.open(copy)
    assert await restored.count_history() == 20
    await restored.close()
    with pytest.raises(StorageError, match="exists"):
        backup_database(db, copy)


# --- through the bot ---


async def test_a_conversation_resumes_after_a_full_application_restart(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = make_settings(tg, tmp_path / "bot.sqlite3")
    ann = User(3001, "Ann", "en")
    app = await launch(settings)
    menu = await say(tg, ann, "/start")
    step = await press(tg, ann, menu, "Run an LLM")
    step = await press(tg, ann, step, "Qwen2.5-14B")
    await halt(tg, app)  # stopped; a new application on the same file
    app = await launch(settings)
    step = await press(tg, ann, step, "AWQ")
    assert "✓ Model: Qwen2.5-14B" in shown(
        step
    ) and "✓ Precision / quantization: AWQ 4-bit" in shown(step)
    typed = await say(
        tg, ann, "ctx 8192"
    )  # the conversation state came back too, not just the draft
    assert "Step 4/5: Batch" in shown(typed)
    await halt(tg, app)


async def test_state_is_written_at_once_not_at_the_next_interval(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = make_settings(tg, tmp_path / "bot.sqlite3")
    app = await launch(settings)
    ann = User(3002, "Ann", "en")
    menu = await say(tg, ann, "/start")
    await press(tg, ann, menu, "Image generation")
    await asyncio.sleep(0.05)
    con = sqlite3.connect(tmp_path / "bot.sqlite3")
    rows = dict(con.execute("SELECT kind || ' ' || key, data FROM ptb_state").fetchall())
    con.close()
    assert rows["conversation:wizard [3002, 3002]"] == "0"
    assert json.loads(rows["user_data 3002"])["wizard"]["3002"]["task"] == "image"
    await halt(tg, app)


async def test_a_step_is_written_before_it_counts_as_done_after_a_restart(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    """PTB marks an update's user and chat for persistence only after every handler group
    (the inbox's write waits for that); the periodic flush between two presses empties that mark, so
    the second press's draft was written only by the next update, after the inbox counted
    the press as done. A kill in that window lost the step (bench/durability.py: a wizard
    whose INT8 press vanished after a restart, 3 runs in 20)."""
    settings = make_settings(tg, tmp_path / "bot.sqlite3")
    app = await launch(settings)
    ann = User(3003, "Ann", "en")
    menu = await say(tg, ann, "/start")
    await halt(tg, app)
    app = await launch(settings)  # like a flush, a new start begins with nothing marked
    await press(tg, ann, menu, "Image generation")
    await asyncio.sleep(0.05)
    con = sqlite3.connect(tmp_path / "bot.sqlite3")
    rows = dict(con.execute("SELECT kind || ' ' || key, data FROM ptb_state").fetchall())
    con.close()
    assert json.loads(rows["user_data 3003"])["wizard"]["3003"]["task"] == "image"
    await halt(tg, app)


async def test_inbox_stores_any_update_even_text_telegram_would_never_send(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "i.sqlite3")
    odd = {"update_id": 1, "message": {"text": "lone \udc99 surrogate 🚀"}}
    await repo.inbox_add([odd, {"update_id": 2}])
    await repo.inbox_add([odd])  # fetched twice: stored once
    assert await repo.inbox_pending() == [odd, {"update_id": 2}]
    await repo.inbox_delete([1])
    assert await repo.inbox_pending() == [{"update_id": 2}]
    await repo.close()


async def test_the_daily_retention_job_is_scheduled_and_purges(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    app = await launch(make_settings(tg, tmp_path / "bot.sqlite3", history_retention_days=30))
    try:
        (job,) = app.job_queue.get_jobs_by_name("retention")
        hid = await app.repo.add_history(
            user_id=1,
            chat_id=1,
            raw_text="old",
            canonical=None,
            workload=None,
            summary=None,
            catalog_version="v",
        )
        _set_created_at(app.repo.path, hid, "2020-01-01T00:00:00+00:00")
        await app.repo.add_history(
            user_id=1,
            chat_id=1,
            raw_text="new",
            canonical=None,
            workload=None,
            summary=None,
            catalog_version="v",
        )
        await job.run(app)
        assert [e.raw_text for e in await app.repo.recent_history(1, 1)] == ["new"]
    finally:
        await halt(tg, app)
