"""The engine's lazily built tables, found and built in one place: bot.warmup builds them at
start-up so that no update under load waits for one (patterns, alias indexes, data files
read once)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable

import advisor


def tables() -> list[Callable[[], object]]:
    """The engine's lazily built tables: every function of an `advisor` module cached with
    functools (`cache_info`) and called with no argument (patterns, alias indexes, data
    files read once). Cached functions that take arguments are per-input memos, not
    tables."""
    found = []
    for info in pkgutil.walk_packages(advisor.__path__, "advisor."):
        module = importlib.import_module(info.name)
        for fn in vars(module).values():
            if getattr(fn, "__module__", None) != module.__name__ or not hasattr(fn, "cache_info"):
                continue
            params = inspect.signature(fn).parameters.values()
            if all(
                p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                for p in params
            ):
                found.append(fn)
    return found


def build_tables() -> int:
    """Build every table now, at start-up. The sample question reaches most of them; the rest
    (18 on 2026-12-01: the alias index of unknown names alone 34 ms, the family and
    machine-line patterns, the Chinese filler words) were built by the first question that
    needed them, under load (the first unknown model's parse took 76 ms). Returns how many."""
    built = tables()
    for fn in built:
        fn()
    return len(built)
