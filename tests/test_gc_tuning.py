"""bot.gc_tuning: after start-up the collector keeps running, in larger batches, and never
walks what start-up loaded. Checked in a child process: freezing pytest's own objects would
change every test after this one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import gc
from advisor.parse import parse_query
from bot.gc_tuning import THRESHOLDS, settle_after_start_up
parse_query("qwen2.5-7b int4 on 4090")  # start-up work: catalogs and patterns loaded
settle_after_start_up()
assert gc.isenabled()
assert gc.get_threshold() == THRESHOLDS
assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()

class Node:
    pass

# a reference cycle made after start-up is still collected
a, b = Node(), Node()
a.other, b.other = b, a
del a, b
assert gc.collect() >= 2
print("ok")
"""


def test_after_start_up_cycles_are_still_collected_and_start_up_objects_are_frozen() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
