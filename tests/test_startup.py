"""Operator mistakes stop `python -m bot` with one line and a non-zero exit, no traceback."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.settings import Settings, settings_error_line
from standin import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
GOOD_TOKEN = "123456:test-token-for-the-stand-in-000000000"


async def run_bot(
    tmp_path: Path,
    env: dict[str, str],
    *args: str,
    timeout: float = 30,
    wrap: list[str] | None = None,
) -> tuple[int, str]:
    """`python -m bot` with `args`; `wrap`: a command it runs under (read_only_mount)."""
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "DATABASE_", "ADMIN_"))
    }
    full.update({"PYTHONPATH": str(ROOT), "DATABASE_PATH": str(tmp_path / "db.sqlite3")})
    full.update(env)
    proc = await asyncio.create_subprocess_exec(
        *(wrap or []),
        sys.executable,
        "-m",
        "bot",
        *args,
        cwd=tmp_path,
        env=full,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode or 0, (out + err).decode()


def _assert_one_clear_line(output: str, *needles: str) -> None:
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output


async def test_missing_token_says_where_to_put_it(tmp_path: Path) -> None:
    rc, out = await run_bot(tmp_path, {})
    assert rc == 2
    _assert_one_clear_line(out, "TELEGRAM_BOT_TOKEN is not set", "--local")


async def test_malformed_settings_name_the_setting(tmp_path: Path) -> None:
    rc, out = await run_bot(
        tmp_path, {"TELEGRAM_BOT_TOKEN": "oops", "DEFAULT_LANGUAGE": "fr", "ADMIN_USER_IDS": "1,x"}
    )
    assert rc == 2
    _assert_one_clear_line(out, "TELEGRAM_BOT_TOKEN", "DEFAULT_LANGUAGE", "ADMIN_USER_IDS")
    assert "oops" not in out  # the token's value is never printed


async def test_wrong_token_is_one_line(tmp_path: Path) -> None:
    async with FakeTelegram() as tg:
        tg.valid_token = GOOD_TOKEN
        rc, out = await run_bot(
            tmp_path,
            {
                "TELEGRAM_BOT_TOKEN": "999999:wrong-token-xxxxxxxxxxxxxxxxxxxxxxxxxx",
                "TELEGRAM_API_BASE_URL": tg.base_url,
            },
        )
    assert rc == 2
    _assert_one_clear_line(out, "rejected TELEGRAM_BOT_TOKEN")
    assert "wrong-token" not in out
    assert "Unclosed" not in out  # the HTTP sessions were closed before exiting


async def test_unreachable_bot_api_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, out = await run_bot(
        tmp_path,
        {"TELEGRAM_BOT_TOKEN": GOOD_TOKEN, "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{port}/bot"},
    )
    assert rc == 2
    _assert_one_clear_line(out, "cannot reach the Bot API")
    assert "Unclosed" not in out and GOOD_TOKEN not in out


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "http://127.0.0.1:9", "https://x.org/api/"])
async def test_a_base_url_without_bot_is_one_line_without_the_token(
    tmp_path: Path, url: str
) -> None:
    rc, out = await run_bot(
        tmp_path, {"TELEGRAM_BOT_TOKEN": GOOD_TOKEN, "TELEGRAM_API_BASE_URL": url}
    )
    assert rc == 2
    _assert_one_clear_line(out, "TELEGRAM_API_BASE_URL", "must end with /bot")
    assert GOOD_TOKEN not in out and GOOD_TOKEN.split(":")[1] not in out


async def test_a_damaged_database_is_one_line_at_start_up(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE filler (x TEXT)")
    con.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 200)
    con.commit()
    page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with db.open("r+b") as f:
        f.seek(page * 10)
        f.write(b"\xff" * page)
    async with FakeTelegram() as tg:
        rc, out = await run_bot(
            tmp_path, {"TELEGRAM_BOT_TOKEN": GOOD_TOKEN, "TELEGRAM_API_BASE_URL": tg.base_url}
        )
    assert rc == 2
    _assert_one_clear_line(out, str(db))
    assert "damaged" in out or "malformed" in out
    assert "Unclosed" not in out


def read_only_mount(folder: Path) -> list[str] | None:
    """Root writes through file modes, so for root the folder is made read-only the way a
    read-only volume is: the bot runs in a mount namespace of its own (`unshare -m`, the
    host's mounts untouched) where `folder` is bind-mounted read-only onto itself. The
    command prefix, or None where unshare or mounting is refused here."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return None
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    probe = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            script,
            str(folder),
            "sh",
            "-c",
            '! touch "$0/.w"',
            str(folder),
        ],
        capture_output=True,
        timeout=30,
    )
    if probe.returncode != 0:
        return None
    return ["unshare", "-m", "sh", "-c", script, str(folder)]


async def test_a_read_only_database_is_one_line_at_start_up(tmp_path: Path) -> None:
    """Runs as root too (tests run as root in containers): there a read-only bind mount,
    elsewhere file modes."""
    db = tmp_path / "db.sqlite3"
    sqlite3.connect(db).close()
    wrap = None
    if os.geteuid() == 0:
        wrap = read_only_mount(tmp_path)
        if wrap is None:
            pytest.skip("root, and no read-only bind mount allowed here (unshare -m refused)")
    else:
        db.chmod(0o400)
        tmp_path.chmod(0o500)  # nor can SQLite create the -wal file beside it
    try:
        async with FakeTelegram() as tg:
            rc, out = await run_bot(
                tmp_path,
                {"TELEGRAM_BOT_TOKEN": GOOD_TOKEN, "TELEGRAM_API_BASE_URL": tg.base_url},
                wrap=wrap,
            )
    finally:
        tmp_path.chmod(0o700)
    assert rc == 2
    _assert_one_clear_line(out, str(db))
    assert "not writable" in out or "readonly" in out or "read-only" in out.lower()


async def test_unwritable_database_path_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    async with FakeTelegram() as tg:
        rc, out = await run_bot(
            tmp_path,
            {
                "TELEGRAM_BOT_TOKEN": GOOD_TOKEN,
                "TELEGRAM_API_BASE_URL": tg.base_url,
                "DATABASE_PATH": str(tmp_path / "file" / "db.sqlite3"),
            },
        )
    assert rc == 2
    _assert_one_clear_line(out, "cannot open database")


async def test_backup_command_copies_the_database(tmp_path: Path) -> None:
    from bot.storage import Repository

    repo = await Repository.open(tmp_path / "db.sqlite3")
    await repo.close()
    rc, out = await run_bot(tmp_path, {}, "backup", str(tmp_path / "copy.sqlite3"))
    assert rc == 0 and (tmp_path / "copy.sqlite3").stat().st_size > 0, out
    odd = tmp_path / "copy #1?.sqlite3"  # a '#' or '?' once made an empty copy
    rc, out = await run_bot(tmp_path, {}, "backup", str(odd))
    assert rc == 0, out
    con = sqlite3.connect(odd)
    assert con.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] >= 2
    con.close()


def test_settings_error_line_names_each_bad_setting() -> None:
    with pytest.raises(ValidationError) as exc:
        Settings(_env_file=None, history_retention_days=0, telegram_api_base_url="ftp://x")  # type: ignore[call-arg]
    line = settings_error_line(exc.value)
    assert "HISTORY_RETENTION_DAYS" in line and "TELEGRAM_API_BASE_URL" in line and "\n" not in line


def test_token_never_appears_in_the_settings_repr() -> None:
    s = Settings(_env_file=None, telegram_bot_token=GOOD_TOKEN)  # type: ignore[call-arg]
    assert GOOD_TOKEN not in repr(s) and GOOD_TOKEN not in str(s.model_dump())


async def test_local_try_out_runs_the_whole_conversation_in_a_terminal(tmp_path: Path) -> None:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "DATABASE_"))}
    full.update({"PYTHONPATH": str(ROOT), "DATABASE_PATH": str(tmp_path / "db.sqlite3")})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "--local",
        "--lang",
        "en",
        cwd=tmp_path,
        env=full,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    # task 1 (run an LLM), model 1 (Qwen2.5-7B), then skip (0 at every step) precision,
    # context, batch, budget
    keys = "1\n1\n0\n0\n0\n0\n/vram 13b fp16 on 3090\n/quit\n"
    out, _ = await asyncio.wait_for(proc.communicate(keys.encode()), 60)
    text = out.decode()
    assert proc.returncode == 0, text
    assert "What do you want to do?" in text and "Step 5/5: Budget" in text
    assert text.count("VRAM per card") == 2 and "1× GeForce RTX 3090 (your setup)" in text
    assert "Traceback" not in text
    assert (tmp_path / "db-local.sqlite3").exists()  # apart from the real database


async def test_a_local_try_out_keeps_language_and_history_for_the_next_one(
    tmp_path: Path,
) -> None:
    """The first run chooses Chinese and asks; the second starts in Chinese and its /history
    lists that question beside its own. Ids keep growing, so no row of the first run is
    taken for one of the second (history.update_id is unique), and neither run warns."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "DATABASE_"))}
    full.update({"PYTHONPATH": str(ROOT), "DATABASE_PATH": str(tmp_path / "db.sqlite3")})
    outs = []
    # /lang's first button is 中文 in a private chat
    for keys in ("/lang\n1\n/vram 13b fp16\n/quit\n", "/vram qwen2.5-7b int4\n/history\n/quit\n"):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "--local",
            "--lang",
            "en",
            cwd=tmp_path,
            env=full,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(keys.encode()), 60)
        assert proc.returncode == 0, out.decode()
        outs.append(out.decode())
    first, second = outs
    assert "What do you want to do?" in first and "WARNING" not in first
    assert "你想做什么" in second and "What do you want to do?" not in second
    assert "WARNING" not in second and "Traceback" not in second
    assert "13b · fp16" in second  # the first run's question, listed by /history
    con = sqlite3.connect(tmp_path / "db-local.sqlite3")
    rows = con.execute("SELECT raw_text FROM history ORDER BY id").fetchall()
    con.close()
    assert len(rows) == 2 and "13b fp16" in rows[0][0] and "qwen2.5-7b int4" in rows[1][0]
