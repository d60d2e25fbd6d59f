"""The event loop the bot runs on: uvloop when it is installed, else asyncio's own.

Why: uvloop (libuv, the loop under Node.js; MagicStack, kept since 2016) runs the same
asyncio programs with less CPU per callback and per socket read, and the bot is a loop of
small callbacks (getUpdates, sendMessage, SQLite handoffs). It is a dependency on Linux and
macOS (pyproject.toml); where it is missing (Windows, a trimmed install) asyncio's loop runs
the same code, so nothing else may depend on which one it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

try:
    import uvloop
except ImportError:  # pragma: no cover - exercised by tests/test_event_loop.py
    uvloop = None  # type: ignore[assignment]


def name() -> str:
    return "uvloop" if uvloop is not None else "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the fastest loop available."""
    if uvloop is None:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
