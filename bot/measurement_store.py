"""SQL for "I ran it" reports (migration 0006, table `measurements`).

Kept beside `bot.storage` like `bot.lab_store`: it reads and writes through the repository's
`query` and `transaction`, so every write is one BEGIN IMMEDIATE … COMMIT on the writer and
reads go to the reader.
`/forget` deletes a user's rows in `Repository.forget_user`, in the same transaction as the
rest of their data.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from pydantic import BaseModel

from advisor.measured import Outcome, View
from bot.schema import now_iso
from bot.sqlite_worker import changed
from bot.storage import Repository


class Measurement(BaseModel):
    """One report with the question it answers, as stored (user and chat apart)."""

    id: int | None = None
    history_id: int
    canonical: str
    workload: dict  # advisor.models.workload.Workload as JSON: the workload estimated
    runtime: str | None
    assumed: list[tuple[str, str]]
    recipe: str | None
    gpu_id: str
    gpu_count: int
    kind: str  # figure | oom
    measured_bytes: int | None
    limit_bytes: int | None
    measured_what: str  # nvml | allocated | reserved | unknown
    unit_ambiguous: bool
    view: View  # what nvidia-smi shows beside vLLM/SGLang
    estimate_bytes: int
    low_bytes: int
    high_bytes: int
    outcome: Outcome
    catalog_version: str
    created_at: str = ""


_COLUMNS = (
    "history_id, canonical, workload_json, runtime, assumed_json, recipe, gpu_id, gpu_count, "
    "kind, measured_bytes, limit_bytes, measured_what, unit_ambiguous, view, estimate_bytes, "
    "low_bytes, high_bytes, outcome, catalog_version, created_at"
)
_SELECT = f"SELECT id, {_COLUMNS} FROM measurements ORDER BY id"


def _measurement(row: tuple) -> Measurement:
    return Measurement(
        id=row[0],
        history_id=row[1],
        canonical=row[2],
        workload=json.loads(row[3]),
        runtime=row[4],
        assumed=[tuple(a) for a in json.loads(row[5])],
        recipe=row[6],
        gpu_id=row[7],
        gpu_count=row[8],
        kind=row[9],
        measured_bytes=row[10],
        limit_bytes=row[11],
        measured_what=row[12],
        unit_ambiguous=bool(row[13]),
        view=row[14],
        estimate_bytes=row[15],
        low_bytes=row[16],
        high_bytes=row[17],
        outcome=row[18],
        catalog_version=row[19],
        created_at=row[20],
    )


class MeasurementStore:
    def __init__(self, repo: Repository) -> None:
        self._repo = repo

    async def add(
        self, m: Measurement, *, user_id: int, chat_id: int, raw_text: str, update_id: int | None
    ) -> bool:
        """Store one report; False when this update stored it already (a replay)."""
        values = (
            update_id,
            user_id,
            chat_id,
            m.history_id,
            m.canonical,
            json.dumps(m.workload, ensure_ascii=False, sort_keys=True),
            m.runtime,
            json.dumps(m.assumed, ensure_ascii=False),
            m.recipe,
            m.gpu_id,
            m.gpu_count,
            m.kind,
            m.measured_bytes,
            m.limit_bytes,
            m.measured_what,
            int(m.unit_ambiguous),
            m.view,
            m.estimate_bytes,
            m.low_bytes,
            m.high_bytes,
            m.outcome,
            raw_text,
            m.catalog_version,
            now_iso(),
        )
        sql = (
            "INSERT OR IGNORE INTO measurements (update_id, user_id, chat_id, "
            "history_id, canonical, workload_json, runtime, assumed_json, recipe, gpu_id, "
            "gpu_count, kind, measured_bytes, limit_bytes, measured_what, unit_ambiguous, view, "
            "estimate_bytes, low_bytes, high_bytes, outcome, raw_text, catalog_version, "
            f"created_at) VALUES ({', '.join(['?'] * len(values))})"
        )
        return bool(await self._repo.transaction(lambda db: changed(db, sql, values)))

    async def all(self) -> list[Measurement]:
        return [_measurement(r) for r in await self._repo.query(_SELECT)]


def measurement_store(repo: Repository) -> MeasurementStore:
    store = getattr(repo, "measurement_store", None)
    if store is None:
        store = MeasurementStore(repo)
        repo.measurement_store = store  # type: ignore[attr-defined]
    return store


def read_measurements(database: Path) -> list[Measurement]:
    """Every report, read from the database file without writing to it (the export runs
    beside the live bot: SQLite's WAL lets a reader in while the bot writes)."""
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return [_measurement(r) for r in con.execute(_SELECT).fetchall()]
    finally:
        con.close()
