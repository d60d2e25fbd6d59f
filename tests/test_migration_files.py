"""A code tree missing a migration file is refused at start with one line: on a database
that recorded the migration (its file is missing, not from the future), and on a fresh
database (a table the code uses would be missing) (bot.schema)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from bot import schema
from bot.schema import StorageError
from bot.storage import Repository
from standin import STANDIN_TOKEN, FakeTelegram

ROOT = Path(__file__).resolve().parent.parent


def _tree_without(tmp_path: Path, number: int) -> Path:
    folder = tmp_path / f"without-{number:04d}"
    folder.mkdir()
    for f in schema.MIGRATIONS_DIR.glob("*.sql"):
        if not f.name.startswith(f"{number:04d}_"):
            shutil.copy(f, folder / f.name)
    return folder


async def test_a_recorded_migration_missing_from_the_tree_is_named(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite3"
    await (await Repository.open(db)).close()  # every shipped migration recorded
    with pytest.raises(StorageError) as caught:
        await Repository.open(db, migrations_dir=_tree_without(tmp_path, 5))
    line = str(caught.value)
    assert "0005" in line and "lacks" in line and "\n" not in line
    assert "newer than this code" not in line  # 0006 is there: 0005 is missing, not future


async def test_a_fresh_database_from_a_tree_missing_a_migration_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(StorageError) as caught:
        await Repository.open(
            tmp_path / "fresh.sqlite3",
            migrations_dir=_tree_without(tmp_path, 5),
            required_tables=schema.REQUIRED_TABLES,
        )
    line = str(caught.value)
    assert "inbox_handled" in line and "0005_*.sql" in line and "\n" not in line


def test_every_table_the_code_needs_comes_from_a_shipped_migration() -> None:
    shipped = {int(f.name[:4]): f.read_text() for f in schema.MIGRATIONS_DIR.glob("*.sql")}
    for table, number in schema.REQUIRED_TABLES.items():
        assert f"CREATE TABLE {table} " in shipped[number], (table, number)


async def test_the_shipped_tree_opens_a_fresh_database(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "ok.sqlite3")
    await repo.close()
    con = sqlite3.connect(tmp_path / "ok.sqlite3")
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()
    assert set(schema.REQUIRED_TABLES) <= tables


async def test_the_bot_refuses_to_start_in_one_line_from_a_tree_missing_a_migration(
    tmp_path: Path,
) -> None:
    """`python -m bot` from a copy of the code whose migrations/ lacks 0005."""
    tree = tmp_path / "tree"
    for package in ("advisor", "bot", "hublookup", "templates"):
        shutil.copytree(
            ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copytree(_tree_without(tmp_path, 5), tree / "migrations")
    async with FakeTelegram() as tg:
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(tree),
            "TELEGRAM_BOT_TOKEN": STANDIN_TOKEN,
            "TELEGRAM_API_BASE_URL": tg.base_url,
            "DATABASE_PATH": str(tmp_path / "data" / "fresh.sqlite3"),
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tree, env=env, stderr=asyncio.subprocess.PIPE
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    stderr = err.decode()
    assert proc.returncode == 2, stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "inbox_handled" in errors[0] and "0005" in errors[0], stderr
    assert "Traceback" not in stderr
