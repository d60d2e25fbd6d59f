"""New answers are computed on one thread beside the event loop.

Why: a question never asked before holds the loop for 5-20 ms under load (a recommendation
over every card and count, then the template), and every other member's update waited
behind it: a loop-callback probe over bench/load.py counted ~260 such steps in 20 s, the
largest single source of the latency tail. On this thread the same work still needs the
GIL, but CPython hands the GIL back to a waiting thread every `sys.getswitchinterval()`
(5 ms), so the loop answers the cheap updates (a remembered answer, a wizard step) between
slices of it instead of after all of it.

One thread, so answers are computed one at a time, in the order asked; the engine is pure
functions over read-only catalogs, and its memos (advisor.memo) tolerate a second thread
(the loop's own parse and wizard pages) touching them at once. A remembered answer never
comes here: the handoff (~50 us) would cost more than the lookup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engine")


async def run(fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)` on the engine thread; the caller's task waits, the loop does not."""
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, fn, *args)
