"""The container image's files, staged without Docker: exactly what the Dockerfile COPYs
(minus what .dockerignore keeps out of the build context), in an empty folder that stands
for the image's WORKDIR, and an interpreter that sees the test environment's installed
libraries but not this checkout (the editable install's finder is not loaded)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dockerfile_text() -> str:
    return (ROOT / "Dockerfile").read_text().replace("\\\n", " ")


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for line in dockerfile_text().splitlines():
        if line.startswith("ENV "):
            env |= dict(part.split("=", 1) for part in shlex.split(line[4:]))
    return env


def entry_commands() -> tuple[list[str], list[str]]:
    """The image's CMD and its HEALTHCHECK command."""
    text = dockerfile_text()
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))  # type: ignore[union-attr]
    check = re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", text, re.M)
    assert check is not None
    return cmd, json.loads(check.group(1))


def copies() -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY, relative to the build context and WORKDIR."""
    out = []
    for line in dockerfile_text().splitlines():
        if line.startswith("COPY "):
            parts = [p for p in shlex.split(line[5:]) if not p.startswith("--")]
            out.append((parts[:-1], parts[-1]))
    return out


def _pattern(glob: str) -> re.Pattern[str]:
    """A .dockerignore line as Docker reads it (Go's filepath.Match, plus `**`): relative
    to the context's root, `*` stays within one path segment."""
    body = ""
    i = 0
    while i < len(glob):
        if glob.startswith("**", i):
            body, i = body + ".*", i + 2
        elif glob[i] == "*":
            body, i = body + "[^/]*", i + 1
        elif glob[i] == "?":
            body, i = body + "[^/]", i + 1
        else:
            body, i = body + re.escape(glob[i]), i + 1
    return re.compile(body)


def ignored() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        rules.append((negate, _pattern(line.lstrip("!").strip("/"))))
    return rules


def _excluded(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for negate, pattern in rules:  # the last rule that matches decides
        if any(pattern.fullmatch(p) for p in prefixes):
            excluded = not negate
    return excluded


def stage(target: Path) -> list[str]:
    """Copy what the Dockerfile COPYs into `target` (the image's WORKDIR); returns the
    relative paths staged."""
    rules = ignored()
    staged: list[str] = []
    for sources, dest in copies():
        assert not dest.startswith("/"), f"COPY to an absolute path is not staged: {dest}"
        into_folder = dest.endswith("/") or len(sources) > 1
        for src in sources:
            origin = ROOT / src
            assert origin.exists(), f"COPY {src}: not in the build context"
            base = target / dest / Path(src).name if into_folder else target / dest
            files = [origin] if origin.is_file() else sorted(origin.rglob("*"))
            for f in files:
                if not f.is_file():
                    continue
                rel = f.relative_to(ROOT).as_posix()
                if _excluded(rel, rules):
                    continue
                out = base if origin.is_file() else base / f.relative_to(origin)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, out)
                staged.append(out.relative_to(target).as_posix())
    return staged


def interpreter(folder: Path) -> Path:
    """A bare virtual environment (nothing installed into it) whose one .pth line adds this
    environment's site-packages: the libraries resolve, while the .pth files in there, this
    checkout's editable install among them, are not run, so `bot`, `advisor` and `hublookup`
    come only from the working directory, as in the image."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120
    )
    purelib = Path(sysconfig.get_paths()["purelib"])
    lib = next((folder / "lib").glob("python3*/site-packages"))
    (lib / "libraries.pth").write_text(f"{purelib}\n")
    return folder / "bin"
