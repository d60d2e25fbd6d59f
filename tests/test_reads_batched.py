"""Reads asked for at once share the reader's handoffs (SQLiteWorker.statement_rows), as writes do:
200 members arriving together used to queue at the reader's lock one handoff each."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.storage import Repository


async def test_reads_asked_together_share_handoffs_and_each_gets_its_own_rows(
    tmp_path: Path,
) -> None:
    repo = await Repository.open(tmp_path / "r.sqlite3")
    try:
        for uid in range(1, 61):
            await repo.seen(uid, f"u{uid}", "en", uid, "private", None)
            if uid % 3 == 0:
                await repo.set_user_language(uid, "zh")
        before = repo._reader.batches_run
        choices = await asyncio.gather(*(repo.language_choices(u, u) for u in range(1, 61)))
        assert [c[0] for c in choices] == ["zh" if u % 3 == 0 else None for u in range(1, 61)]
        handoffs = repo._reader.batches_run - before
        assert 1 <= handoffs < 10  # one each before
    finally:
        await repo.close()
