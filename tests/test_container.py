"""No Docker here: run the image's own entry command and health check (read from the
Dockerfile, with the image's ENV settings) against the stand-in, as the container would."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import sys
from pathlib import Path

from bot.standin import STANDIN_TOKEN, FakeTelegram
from tests.test_webhook import free_port

ROOT = Path(__file__).resolve().parent.parent


def dockerfile() -> tuple[dict[str, str], list[str], list[str]]:
    """The image's ENV settings, its CMD and its HEALTHCHECK command."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env |= dict(part.split("=", 1) for part in shlex.split(line[4:]))
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))  # type: ignore[union-attr]
    check = re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", text, re.M)
    assert check is not None
    return env, cmd, json.loads(check.group(1))


def test_the_image_holds_no_token_and_runs_as_a_user() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "TELEGRAM_BOT_TOKEN=" not in text and "COPY . " not in text
    assert re.search(r"^USER (?!root)\w+", text, re.M)
    assert ".env" in (ROOT / ".dockerignore").read_text().splitlines()
    compose = (ROOT / "compose.yaml").read_text()
    assert "advisor-data:/data" in compose and "env_file: .env" in compose


async def run(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode()


async def test_the_entry_command_starts_the_bot_and_passes_its_health_check(
    tmp_path: Path,
) -> None:
    image_env, cmd, check = dockerfile()
    assert cmd[:3] == ["python", "-m", "bot"]
    async with FakeTelegram() as tg:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WEBHOOK_"))}
        env |= image_env
        env |= {
            # only what differs on this machine: the stand-in, a free port, a writable folder
            "TELEGRAM_BOT_TOKEN": STANDIN_TOKEN,
            "TELEGRAM_API_BASE_URL": tg.base_url,
            "DATABASE_PATH": str(tmp_path / "data" / "advisor.sqlite3"),
            "HEALTH_PORT": str(free_port()),
            "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",  # `python` = this venv
        }
        log = (tmp_path / "bot.log").open("wb")
        bot = await asyncio.create_subprocess_exec(
            *cmd, cwd=tmp_path, env=env | {"PYTHONPATH": str(ROOT)}, stdout=log, stderr=log
        )
        try:
            await tg.wait_polling(timeout=30)
            rc, out = 1, ""
            for _ in range(40):
                rc, out = await run(check, env)
                if rc == 0:
                    break
                await asyncio.sleep(0.25)
            assert rc == 0, out
            assert json.loads(out) == {"database": "ok", "bot_api": "ok", "last_update_age_s": None}
        finally:
            bot.send_signal(signal.SIGTERM)
            tg.release_pollers()
            assert await asyncio.wait_for(bot.wait(), 20) == 0
            log.close()
        lines = (tmp_path / "bot.log").read_text().splitlines()
        assert lines and all(json.loads(line)["level"] for line in lines)  # LOG_FORMAT=json
        assert STANDIN_TOKEN not in "\n".join(lines)


async def test_the_health_check_fails_when_the_bot_is_down(tmp_path: Path) -> None:
    image_env, _, check = dockerfile()
    env = dict(os.environ) | image_env | {"HEALTH_PORT": str(free_port())}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    rc, out = await run(check, env)
    assert rc != 0 and "cannot reach" in out
