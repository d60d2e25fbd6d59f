"""HF_ENDPOINT as mirror guides write it (a trailing slash, a path prefix), and a slow
mirror's late reading kept by the CLI."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hublookup.client import HubClient
from hublookup.settings import HubSettings
from hublookup.standin import HubStandin
from tests.test_hub_cli import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
async def hub() -> AsyncIterator[HubStandin]:
    standin = HubStandin()
    await standin.start()
    yield standin
    await standin.stop()


@pytest.fixture
async def prefixed_hub() -> AsyncIterator[HubStandin]:
    standin = HubStandin(prefix="/hf")
    await standin.start()
    yield standin
    await standin.stop()


def test_settings_drop_the_trailing_slash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "https://hf-mirror.com/")
    assert HubSettings(_env_file=None).hf_endpoint == "https://hf-mirror.com"  # type: ignore[call-arg]
    monkeypatch.setenv("HF_ENDPOINT", "https://host.example/prefix/")
    assert HubSettings(_env_file=None).hf_endpoint == "https://host.example/prefix"  # type: ignore[call-arg]


async def test_endpoint_with_a_trailing_slash_reads_the_repo(hub: HubStandin) -> None:
    facts = await HubClient(hub.url + "/", None, 20).lookup("EleutherAI/pythia-70m")
    assert facts.tensors is not None and facts.tensors.params > 0
    assert not [r for r in hub.requests if " //" in r]  # no //api/models/… request


async def test_endpoint_with_a_path_prefix_and_a_slash(prefixed_hub: HubStandin) -> None:
    assert prefixed_hub.url.endswith("/hf")
    client = HubClient(prefixed_hub.url + "/", None, 20)
    facts = await client.lookup("EleutherAI/pythia-70m")
    assert facts.config is not None and facts.config["architectures"] == ["GPTNeoXForCausalLM"]
    assert "EleutherAI/pythia-70m" in (await client.search("pythia-70m") or [])
    api = [r.split(" ", 1)[1] for r in prefixed_hub.requests if " /cdn/" not in r]
    assert api and all(path.startswith("/hf/") for path in api)  # the CDN is its own origin


async def test_cli_waits_for_a_slow_mirror_and_caches_its_reading(
    hub: HubStandin, tmp_path: Path
) -> None:
    """Every request takes 0.6 s and a lookup makes several in turn; its limit is 1 s: the
    reading lands late. The CLI waits for it (HUB_CLI_WAIT_S), answers with it, and a later
    --offline run is answered from the cache it wrote."""
    db = tmp_path / "cache.sqlite3"
    hub.delay_s = 0.6
    rc, out = await cli(
        hub,
        db,
        "EleutherAI/pythia-410m on a 4090",
        "--json",
        endpoint=hub.url + "/",
        wait_s=120,
        HUB_TIMEOUT_S="1",
        HUB_CLI_WAIT_S="60",
    )
    assert rc == 0, out
    assert json.loads(out)["hub"]["repo_id"] == "EleutherAI/pythia-410m"
    await hub.stop()
    hub.requests.clear()
    rc, out = await cli(
        hub, db, "EleutherAI/pythia-410m on a 4090", "--offline", "--json", endpoint=hub.url + "/"
    )
    assert rc == 0 and json.loads(out)["hub"]["repo_id"] == "EleutherAI/pythia-410m"
    assert not hub.requests


async def test_without_the_wait_the_same_slow_mirror_caches_nothing(
    hub: HubStandin, tmp_path: Path
) -> None:
    """The lookup above lands only through the wait: with HUB_CLI_WAIT_S=0 (the behaviour
    before it) the same mirror answers "timeout" and a later --offline run has nothing."""
    db = tmp_path / "cache.sqlite3"
    hub.delay_s = 0.6
    rc, out = await cli(
        hub,
        db,
        "EleutherAI/pythia-410m on a 4090",
        "--json",
        endpoint=hub.url + "/",
        HUB_TIMEOUT_S="1",
        HUB_CLI_WAIT_S="0",
    )
    assert rc != 0 and "hub" not in json.loads(out), out
    await hub.stop()
    rc, out = await cli(hub, db, "EleutherAI/pythia-410m on a 4090", "--offline")
    assert rc == 2 and "not consulted offline" in out
