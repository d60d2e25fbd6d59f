"""The container image, tested from exactly what it ships: the files the Dockerfile copies,
staged into an empty folder (tests/image_stage.py), run with the image's own entry command
and health check against the stand-in. Where a Docker daemon answers, the image itself is
built and started too."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from standin import STANDIN_TOKEN, FakeTelegram, User
from tests.image_stage import ROOT, entry_commands, image_env, interpreter, stage
from tests.test_webhook import free_port


def test_the_image_holds_no_token_and_runs_as_a_user() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "TELEGRAM_BOT_TOKEN=" not in text and "COPY . " not in text
    assert re.search(r"^USER (?!root)\w+", text, re.M)
    assert ".env" in (ROOT / ".dockerignore").read_text().splitlines()
    compose = (ROOT / "compose.yaml").read_text()
    assert "advisor-data:/data" in compose and "env_file: .env" in compose


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the staged WORKDIR, the bin folder of an interpreter that sees only it)."""
    base = tmp_path_factory.mktemp("image")
    app = base / "app"
    app.mkdir()
    stage(app)
    return app, interpreter(base / "venv")


def image_process_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "WEBHOOK_", "PYTHON", "DATABASE_", "HEALTH_"))
    }
    env |= image_env()
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"  # `python` = the staged interpreter
    return env | extra


def test_the_staged_image_sees_none_of_the_checkout(image: tuple[Path, Path]) -> None:
    """The proof that the tests below test the image, not this working tree: its Python
    finds the packages in the staged folder and nowhere else."""
    app, bin_dir = image
    probe = (
        "import sys, bot, advisor, telegram;"
        "print(*bot.__path__, *advisor.__path__);"
        "print(any(p.rstrip('/') == sys.argv[1] for p in sys.path))"
    )
    out = subprocess.run(
        ["python", "-c", probe, str(ROOT)],
        cwd=app,
        env=image_process_env(bin_dir),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    files, on_path = out.stdout.split("\n")[:2]
    assert all(f.startswith(str(app)) for f in files.split()), files
    assert on_path == "False"


async def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode()


async def test_the_staged_image_starts_answers_and_passes_its_health_check(
    image: tuple[Path, Path], tmp_path: Path
) -> None:
    """The image's CMD from the staged files: it starts (every module `python -m bot`
    imports was copied), answers a question (catalogs, templates, migrations resolve from
    the staged tree) and its HEALTHCHECK command passes; SIGTERM stops it cleanly."""
    app, bin_dir = image
    cmd, check = entry_commands()
    assert cmd[:3] == ["python", "-m", "bot"]
    async with FakeTelegram() as tg:
        env = image_process_env(
            bin_dir,
            # only what differs on this machine: the stand-in, a free port, a writable folder
            TELEGRAM_BOT_TOKEN=STANDIN_TOKEN,
            TELEGRAM_API_BASE_URL=tg.base_url,
            DATABASE_PATH=str(tmp_path / "data" / "advisor.sqlite3"),
            HEALTH_PORT=str(free_port()),
        )
        log_path = tmp_path / "bot.log"
        log = log_path.open("wb")
        bot = await asyncio.create_subprocess_exec(*cmd, cwd=app, env=env, stdout=log, stderr=log)
        try:
            try:
                await tg.wait_polling(timeout=30)
            except TimeoutError:
                pytest.fail(f"the image's bot did not start: {log_path.read_text()[-2000:]}")
            reply = await tg.reply_to(tg.user_sends(User(61, "Ann"), text="/vram 7b"), timeout=30)
            assert "7B" in reply.result["text"] or "7b" in reply.result["text"].lower()
            rc, out = 1, ""
            for _ in range(40):
                rc, out = await run(check, app, env)
                if rc == 0:
                    break
                await asyncio.sleep(0.25)
            assert rc == 0, out
            assert json.loads(out)["database"] == "ok"
        finally:
            bot.send_signal(signal.SIGTERM)
            tg.release_pollers()
            assert await asyncio.wait_for(bot.wait(), 20) == 0
            log.close()
        lines = log_path.read_text().splitlines()
        assert lines and all(json.loads(line)["level"] for line in lines)  # LOG_FORMAT=json
        assert STANDIN_TOKEN not in "\n".join(lines)


async def test_the_health_check_fails_when_the_bot_is_down(
    image: tuple[Path, Path], tmp_path: Path
) -> None:
    app, bin_dir = image
    _, check = entry_commands()
    env = image_process_env(bin_dir, HEALTH_PORT=str(free_port()))
    rc, out = await run(check, app, env)
    assert rc != 0 and "cannot reach" in out


def _docker_usable() -> str | None:
    """Why the Docker test cannot run here, or None. A build installs the dependencies
    (minutes, and a registry to reach): in CI it runs only when RUN_DOCKER_TESTS=1."""
    if os.environ.get("CI") and os.environ.get("RUN_DOCKER_TESTS") != "1":
        return "CI without RUN_DOCKER_TESTS=1 (an image build takes minutes)"
    if shutil.which("docker") is None:
        return "no docker command"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker info: {exc}"
    if info.returncode != 0:
        return "no Docker daemon answers"
    return None


@pytest.mark.skipif(_docker_usable() is not None, reason=str(_docker_usable()))
def test_the_docker_image_builds_and_its_bot_module_starts() -> None:
    tag = "gpu-advisor-bot:test-image"
    build = subprocess.run(
        ["docker", "build", "-q", "-t", tag, str(ROOT)], capture_output=True, text=True, timeout=900
    )
    assert build.returncode == 0, build.stderr[-2000:]
    try:
        # no token: the bot module imports everything it needs, then says what is missing
        started = subprocess.run(
            ["docker", "run", "--rm", "-e", "TELEGRAM_BOT_TOKEN=", tag, "python", "-m", "bot"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "TELEGRAM_BOT_TOKEN is not set" in started.stderr, started.stderr[-2000:]
        assert "Traceback" not in started.stderr
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
