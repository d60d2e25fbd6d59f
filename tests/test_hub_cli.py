"""`python -m advisor "<repo id>"` against the stand-in Hub: lookup, cache, --offline,
suggestions for a name outside the catalog."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hublookup.standin import HubStandin

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
async def hub() -> AsyncIterator[HubStandin]:
    standin = HubStandin()
    await standin.start()
    yield standin
    await standin.stop()


async def cli(
    hub: HubStandin,
    db: Path,
    *args: str,
    endpoint: str | None = None,
    wait_s: float = 60,
    **env_extra: str,
) -> tuple[int, str]:
    """`python -m advisor … --db DB` against the stand-in Hub (at `endpoint`, written as a
    user would; its URL by default); settings in `env_extra` win over the defaults."""
    env = {**os.environ, "HF_ENDPOINT": endpoint or hub.url, "HUB_TIMEOUT_S": "20", **env_extra}
    env.pop("HF_TOKEN", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "advisor",
        *args,
        "--db",
        str(db),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), wait_s)
    return proc.returncode or 0, out.decode()


async def test_repo_id_is_looked_up_then_answered_offline_from_the_cache(
    hub: HubStandin, tmp_path: Path
) -> None:
    db = tmp_path / "cache.sqlite3"
    rc, out = await cli(hub, db, "EleutherAI/pythia-2.8b on a 4090", "--json")
    assert rc == 0
    answer = json.loads(out)
    assert answer["hub"]["repo_id"] == "EleutherAI/pythia-2.8b"
    assert answer["hub"]["params_from"] == "safetensors"
    assert answer["workload"]["params_b"] == pytest.approx(2.775208960)
    await hub.stop()
    hub.requests.clear()
    rc, out = await cli(hub, db, "EleutherAI/pythia-2.8b on a 4090", "--offline")
    assert rc == 0 and "Architecture from the Hugging Face Hub" in out
    assert not hub.requests


async def test_offline_without_a_cached_reading_says_so(hub: HubStandin, tmp_path: Path) -> None:
    rc, out = await cli(hub, tmp_path / "c.sqlite3", "EleutherAI/pythia-1b", "--offline")
    assert rc == 2 and "not consulted offline" in out
    assert not hub.requests


async def test_a_name_outside_the_catalog_gets_hub_suggestions(
    hub: HubStandin, tmp_path: Path
) -> None:
    rc, out = await cli(hub, tmp_path / "c.sqlite3", "dolly-v2-3b on a 3060", "--json")
    assert rc == 2
    assert json.loads(out)["error"]["suggestions"][0] == "databricks/dolly-v2-3b"


async def test_the_command_line_shares_the_bots_hub_cache_through_its_database(
    tmp_path: Path,
) -> None:
    """`--db DATABASE_PATH`: what the bot cached (through its Repository) the command line's
    file store reads, and the other way round; the table is the one migration 0004 made."""
    from advisor.hubspec import HubFacts
    from bot.storage import Repository
    from hublookup.cache import HubCache, SqliteFileStore

    db = tmp_path / "bot.sqlite3"
    repo = await Repository.open(db)
    try:
        bot_side = HubFacts(repo_id="Org/Bot-Model", sha="abc", read_at="2026-11-30T00:00:00Z")
        await HubCache(repo).put(bot_side)
        cli_side = HubFacts(repo_id="Org/Cli-Model", read_at="2026-12-01T00:00:00Z")
        await HubCache(SqliteFileStore(db)).put(cli_side)
        assert await HubCache(SqliteFileStore(db)).get("org/bot-model") == bot_side
        assert await HubCache(repo).get("ORG/CLI-MODEL") == cli_side
        assert await HubCache(repo).get("org/elsewhere") is None
    finally:
        await repo.close()
