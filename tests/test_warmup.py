"""bot.warmup: what start-up loads before the first update, so no update under load waits
on a table, a template or a pattern being built; and that it answers no question in
advance (per-question memos empty after it)."""

from __future__ import annotations

from advisor import memo
from advisor.tables import build_tables, tables
from bot.warmup import warm_engine


def test_every_table_is_built_at_start_up_and_no_answer_is_kept() -> None:
    found = tables()
    assert len(found) > 50  # the walk finds the engine's tables (71 on 2026-12-01)
    for fn in found:
        fn.cache_clear()
    warm_engine(None)
    not_built = [f"{fn.__module__}.{fn.__name__}" for fn in found if fn.cache_info().currsize == 0]
    assert not_built == []
    kept = {name: n for name, (n, _, _) in memo.stats().items() if n and name in _per_question()}
    assert kept == {}


def _per_question() -> set[str]:
    return {m.name for m in memo._ALL if not m.table}


def test_build_tables_counts_what_it_built() -> None:
    assert build_tables() == len(tables())


def test_what_start_up_built_is_frozen_out_of_the_collectors_generations() -> None:
    """A full collection walked the catalogs, patterns and tables start-up built in the
    middle of someone's update (bench/gc_pauses.py: the longest generation-2 pause over
    1,500 questions 154.5 ms, 51.4 ms with them frozen). After warm_engine they sit in the
    permanent generation."""
    import gc

    from bot.warmup import YOUNG_GENERATION

    before = gc.get_threshold()
    gc.unfreeze()
    warm_engine(None)
    try:
        assert gc.get_freeze_count() > 10_000
        assert gc.get_threshold() == (YOUNG_GENERATION, *before[1:]) and YOUNG_GENERATION > 700
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
