"""The database file: its folder and modes, the numbered migrations, the checks at open
(WAL, a committed write, `PRAGMA quick_check`) and the online backup. `bot.storage` opens it
through these and then talks SQL to it; nothing here runs inside a handler.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from bot.sqlite_worker import BUSY_TIMEOUT_MS, rows

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


class StorageError(Exception):
    """The operator's problem (unwritable path, database from the future, bad migration):
    start-up stops with this message."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, str, Path]]:
    out = []
    for path in sorted(directory.glob("*.sql")):
        m = re.fullmatch(r"(\d{4})_([\w-]+)\.sql", path.name)
        if not m:
            raise StorageError(f"migration file name must look like 0001_name.sql: {path.name}")
        out.append((int(m.group(1)), m.group(2), path))
    # Numbers only rise, each used once. A gap is allowed: a number may be taken while its
    # file is still being written elsewhere, and lands after a higher one (migrate applies
    # each file by its own number, not by the highest applied).
    versions = [v for v, _, _ in out]
    if len(set(versions)) != len(versions) or 0 in versions:
        raise StorageError(f"migration numbers must be unique and from 0001: {versions}")
    return out


def prepare_files(path: Path) -> None:
    """The folder (0700 when we create it) and the file (0600), created before SQLite does so
    that no moment exists where others may read them. A missing folder or file is logged: a
    deleted data folder or a start from another working directory must not pass unnoticed."""
    folder = path.parent
    if not folder.exists():
        log.warning("data folder %s does not exist; creating it", folder.resolve())
        folder.mkdir(mode=0o700, parents=True)
    if not path.exists():
        log.warning("no database at %s; starting a new, empty one", path.resolve())
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def restrict(path: Path) -> None:
    """Owner-only database files, even for a file an earlier release created world-readable.
    SQLite gives -wal and -shm the database file's mode when it creates them."""
    for suffix in ("", "-wal", "-shm"):
        f = path.with_name(path.name + suffix)
        try:
            if f.exists() and f.stat().st_mode & 0o077:
                f.chmod(0o600)
        except OSError as exc:  # a file we do not own: say so, keep going
            log.warning("could not make %s private: %s", f, exc)


def schema_version(db: sqlite3.Connection) -> int:
    if not rows(
        db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ):
        return 0
    return int((rows(db, "SELECT MAX(version) FROM schema_migrations"))[0][0] or 0)


def applied_versions(db: sqlite3.Connection) -> set[int]:
    if not rows(
        db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ):
        return set()
    return {int(r[0]) for r in rows(db, "SELECT version FROM schema_migrations")}


def migrate(db: sqlite3.Connection, path: Path, files: list[tuple[int, str, Path]]) -> int:
    """Apply every file whose number the database has not recorded, in order: a file that
    lands below one already applied (0005 after 0006) is applied too."""
    applied = applied_versions(db)
    known = {v for v, _, _ in files}
    lacking = applied - known
    if lacking and min(lacking) < max(known, default=0):
        # below a number the tree has: its file is missing from this tree, not from the future
        names = ", ".join(f"{v:04d}" for v in sorted(lacking))
        raise StorageError(
            f"database {path} has migration {names}, which this code tree lacks "
            f"(no {names}_*.sql in {files[0][2].parent if files else 'migrations/'}): the "
            "deployed tree is incomplete; deploy the whole release"
        )
    if lacking:
        raise StorageError(
            f"database {path} has schema version {max(lacking)}, newer than this code "
            f"(knows up to {max(known, default=0)}); run a newer release or restore a backup"
        )
    for version, name, file in files:
        if version in applied:
            continue
        script = (
            "BEGIN IMMEDIATE;\n"
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);\n"
            f"{file.read_text(encoding='utf-8')}\n;\n"
            # version and name come from the file name pattern above (digits, word chars)
            f"INSERT INTO schema_migrations VALUES ({version}, '{name}', '{now_iso()}');\n"
            "COMMIT;"
        )
        try:
            db.executescript(script)
        except sqlite3.Error as exc:
            if db.in_transaction:
                rows(db, "ROLLBACK")
            raise StorageError(f"migration {file.name} failed, nothing changed: {exc}") from exc
    return max(applied | known, default=0)


# The tables the bot's code reads and writes, each with the migration that creates it. A
# tree missing a migration file would otherwise start on a fresh database without that
# table and fail at its first use (a question, an inline query, a handled update).
REQUIRED_TABLES = {
    "users": 1,
    "chats": 1,
    "history": 1,
    "ptb_state": 1,
    "inbox": 2,
    "lab_machines": 3,
    "inline_links": 3,
    "hub_cache": 4,
    "inbox_handled": 5,
    "measurements": 6,
}


def check_tables(db: sqlite3.Connection, path: Path, required: dict[str, int]) -> None:
    if not required:
        return
    present = {r[0] for r in rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = sorted(t for t in required if t not in present)
    if missing:
        files = sorted({f"{required[t]:04d}_*.sql" for t in missing})
        raise StorageError(
            f"database {path} lacks table(s) {', '.join(missing)}: migration file(s) "
            f"{', '.join(files)} missing from the migrations folder; deploy the whole release"
        )


def use_wal(db: sqlite3.Connection) -> None:
    rows(db, "PRAGMA journal_mode = WAL")
    rows(db, "PRAGMA synchronous = NORMAL")


def check_usable(db: sqlite3.Connection, version: int) -> None:
    """A read-only file or folder opens fine and fails at the first write; a damaged file
    fails at some later read. Both are found here, at start-up, instead."""
    problems = [r[0] for r in rows(db, "PRAGMA quick_check")]
    if problems != ["ok"]:
        raise StorageError(
            f"database {_shown(db)} is damaged (PRAGMA quick_check: {problems[0]}); "
            "restore a backup"
        )
    try:
        # a committed write: the schema version in the file header, where `file` shows it
        rows(db, "BEGIN IMMEDIATE")
        rows(db, f"PRAGMA user_version = {int(version)}")
        rows(db, "COMMIT")
    except sqlite3.Error as exc:
        if db.in_transaction:
            rows(db, "ROLLBACK")
        raise StorageError(f"database {_shown(db)} is not writable: {exc}") from exc


def _shown(db: sqlite3.Connection) -> str:
    return next((r[2] for r in rows(db, "PRAGMA database_list") if r[1] == "main"), "?")


def checkpoint(db: sqlite3.Connection) -> None:
    busy, _, _ = (rows(db, "PRAGMA wal_checkpoint(TRUNCATE)"))[0]
    if busy:  # a reader was mid-query; the next checkpoint gets it
        log.info("WAL checkpoint after /forget was busy; SQLite's next one completes it")


def backup_database(source: Path, target: Path) -> None:
    """A consistent copy of a live database through SQLite's online backup API. Runs from the
    command line (`python -m bot backup PATH`), never inside a handler. The copy is created
    owner-only (0600) before SQLite writes into it."""
    if not source.is_file():
        raise StorageError(f"no database at {source}")
    try:
        fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        raise StorageError(f"{target} exists; choose a new file name") from None
    except OSError as exc:
        raise StorageError(f"cannot create {target}: {exc}") from exc
    os.close(fd)
    try:
        # A URI, so that mode=ro applies; the path is percent-encoded, or a '#', '?' or '%'
        # in it would be read as URI syntax (an empty copy, or a traceback).
        src = sqlite3.connect(f"file:{quote(str(source.resolve()))}?mode=ro", uri=True)
        try:
            src.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            dst = sqlite3.connect(target)
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
    except sqlite3.Error as exc:
        target.unlink(missing_ok=True)
        raise StorageError(f"backup failed: {exc}") from exc
