"""A Hub that misbehaves cannot wedge the bot's lookups: a total deadline per lookup (a
Hub that drips one byte at a time included), a bounded number of requests, a cap on every
file read, and whatever cannot be read answered as the Hub's error in the user's language
(hublookup/client.py)."""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import AsyncIterator

import pytest

from bot.settings import Settings
from hublookup.client import HubClient, HubLookupError
from hublookup.standin import DEFAULT_DATA, HubStandin, StandinRepo
from standin import FakeTelegram, User
from tests.conftest import answer_to, halt, launch, shown

TINY = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
TINY_CONFIG = json.loads(
    (DEFAULT_DATA / "TinyLlama__TinyLlama-1.1B-Chat-v1.0" / "config.json").read_text()
)


def _header(claimed: int, body: bytes = b"{}") -> bytes:
    return struct.pack("<Q", claimed) + body


HOSTILE: dict[str, dict[str, bytes]] = {
    # a header announcing 2**62 bytes (the library raised an uncaught parsing error)
    "evil/huge-header": {
        "config.json": json.dumps(TINY_CONFIG).encode(),
        "model.safetensors": _header(2**62),
    },
    # 20 MB announced: over the cap, so never fetched
    "evil/twenty-mb-header": {
        "config.json": json.dumps(TINY_CONFIG).encode(),
        "model.safetensors": _header(20 * 2**20),
    },
    # a header that is not JSON
    "evil/garbage-header": {
        "config.json": json.dumps(TINY_CONFIG).encode(),
        "model.safetensors": _header(6, b"\xff\xfe{[[["),
    },
    # a config.json past its cap (the bot went from 89 to 284 MB reading a 60 MB one)
    "evil/big-config": {
        "config.json": json.dumps(TINY_CONFIG | {"padding": "x" * 8 * 2**20}).encode()
    },
    "evil/not-json-config": {"config.json": b"{not json"},
    "evil/list-config": {"config.json": b"[1, 2, 3]"},
}


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HubStandin]:
    standin = HubStandin()
    await standin.start()
    for repo_id, files in HOSTILE.items():
        standin.repos[repo_id] = StandinRepo(repo_id, "0" * 40, False, dict(files))
    monkeypatch.setenv("HF_ENDPOINT", standin.url)
    monkeypatch.setenv("HUB_TIMEOUT_S", "10")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield standin
    standin.drip_s = 0
    await standin.stop()


async def test_a_dripping_hub_cannot_hold_lookups_past_their_deadline(hub: HubStandin) -> None:
    """Every byte came just inside the read timeout, so the old lookups never ended: their
    threads filled the default pool, and lookups kept failing after the Hub recovered. Now
    each lookup ends by its deadline, however many there were, and the next one after the
    Hub recovers is answered."""
    client = HubClient(hub.url, None, timeout_s=0.3, deadline_s=1.5)
    hub.drip_s = 0.05  # well inside any read timeout
    many = 48  # three times the requests open at once (MAX_REQUESTS)
    results = await asyncio.gather(
        *(client.lookup(TINY) for _ in range(many)), return_exceptions=True
    )
    assert all(isinstance(r, HubLookupError) and r.code == "timeout" for r in results)
    late = list(client.late.values())
    assert late
    # each late reading ends by itself (at its deadline), not when the Hub ends the drip
    finished = await asyncio.wait_for(asyncio.gather(*late, return_exceptions=True), 30)
    assert all(isinstance(r, HubLookupError) and r.code == "timeout" for r in finished)
    hub.drip_s = 0  # the Hub recovers
    facts = await HubClient(hub.url, None, timeout_s=10).lookup(TINY)
    assert facts.tensors is not None and facts.config is not None


@pytest.mark.parametrize("repo_id", sorted(HOSTILE))
async def test_files_over_their_cap_or_not_in_the_hubs_format_are_a_hub_error(
    hub: HubStandin, repo_id: str
) -> None:
    with pytest.raises(HubLookupError) as caught:
        await HubClient(hub.url, None, timeout_s=20).lookup(repo_id)
    assert caught.value.code == "unreadable"


async def test_an_announced_header_over_the_cap_is_not_fetched(hub: HubStandin) -> None:
    with pytest.raises(HubLookupError):
        await HubClient(hub.url, None, timeout_s=20).lookup("evil/twenty-mb-header")
    ranges = [k for k in hub.requests if "model.safetensors" in k and k.startswith("GET /cdn")]
    assert sum(hub.requests[k] for k in ranges) == 1  # the first range only
    assert not hub.requests["whole file"]


@pytest.mark.parametrize(
    ("language", "repo_id", "expected"),
    [
        ("en", "evil/huge-header", "could not be read"),
        ("en", "evil/big-config", "could not be read"),
        ("zh-hans", "evil/twenty-mb-header", "读不了"),
    ],
)
async def test_the_user_gets_the_hubs_error_not_something_went_wrong(
    tg: FakeTelegram,
    settings: Settings,
    hub: HubStandin,
    language: str,
    repo_id: str,
    expected: str,
) -> None:
    app = await launch(settings)
    try:
        call = await answer_to(
            tg, tg.user_sends(User(71, "Hu", language), None, f"{repo_id} on a 4090"), timeout=20
        )
        text = shown(call)
        assert expected in text and repo_id in text
        assert "went wrong" not in text and "出错" not in text
    finally:
        await halt(tg, app)
