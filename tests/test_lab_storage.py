"""/lab storage against real SQLite files: upserts, the per-chat limit under concurrent
writers, hostile text, migrations in either order, and what /forget deletes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from advisor.recommend.owned import Machine
from bot.lab_store import MAX_MACHINES, lab_store
from bot.storage import Repository

HOSTILE = "'; DROP TABLE lab_machines; -- <b>&amp;</b> 🚀 \u202e"


def _m(name: str, gpu: str = "rtx-3090", count: int = 1, note: str | None = None) -> Machine:
    return Machine(name=name, gpu_id=gpu, count=count, note=note)


async def test_a_known_name_replaces_and_hostile_text_round_trips(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "db.sqlite3")
    try:
        store = lab_store(repo)
        assert await store.save(-1, [_m("node1", "a100-40gb-pcie", 4)], 1) == "ok"
        assert await store.save(-1, [_m("node1", "a100-80gb-sxm", 8, HOSTILE)], 1) == "ok"
        [m] = await store.machines(-1)
        assert (m.gpu_id, m.count, m.note) == ("a100-80gb-sxm", 8, HOSTILE)
        assert await store.save(-1, [_m(HOSTILE)], 1) == "ok"
        assert {x.name for x in await store.machines(-1)} == {"node1", HOSTILE}
    finally:
        await repo.close()


async def test_concurrent_writers_never_pass_the_per_chat_limit(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "db.sqlite3")
    try:
        store = lab_store(repo)
        outcomes = await asyncio.gather(
            *(store.save(-7, [_m(f"box{i}")], i) for i in range(MAX_MACHINES + 10))
        )
        assert outcomes.count("ok") == MAX_MACHINES and outcomes.count("full") == 10
        assert len(await store.machines(-7)) == MAX_MACHINES
    finally:
        await repo.close()


async def test_machines_follow_a_migration_in_either_order_and_survive_a_reopen(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db.sqlite3"
    repo = await Repository.open(path)
    try:
        store = lab_store(repo)
        await store.save(-5, [_m("node1", count=4), _m("ws")], 1)
        await store.machines(-100_5)  # an empty answer now cached for the supergroup
        # the supergroup spoke first and registered its own "ws": it keeps it
        await store.save(-100_5, [_m("ws", "rtx-4090")], 1)
        await repo.migrate_chat(-5, -100_5)
        await repo.migrate_chat(-5, -100_5)  # the second announcement moves nothing
        moved = {m.name: m.gpu_id for m in await store.machines(-100_5)}
        assert moved == {"node1": "rtx-3090", "ws": "rtx-4090"}
        assert await store.machines(-5) == []
    finally:
        await repo.close()
    again = await Repository.open(path)
    try:
        assert len(await lab_store(again).machines(-100_5)) == 2
    finally:
        await again.close()


async def test_forget_user_deletes_their_own_cards_but_no_groups_machines(tmp_path: Path) -> None:
    repo = await Repository.open(tmp_path / "db.sqlite3")
    try:
        store = lab_store(repo)
        await store.save(42, [_m("my pc")], 42)  # private chat: chat id = user id
        await store.save(-9, [_m("node1")], 42)  # a group's machine the user registered
        deleted = await repo.forget_user(42)
        assert deleted["my_cards"] == 1
        assert await store.machines(42) == []
        assert [m.name for m in await store.machines(-9)] == ["node1"]
        assert deleted["machines_written"] == 1
        left = await repo.query("SELECT added_by FROM lab_machines")
        assert left == [(None,)]
    finally:
        await repo.close()
