"""Instruction counts of the engine's two per-question costs, machine-independent: what
`bench/speed.py` times, counted by valgrind's callgrind (the same count for the same code
and inputs, whatever else the machine is doing; its wall times here moved ±50% within
minutes).

    python bench/instructions.py            # every row, ~4-5 min (valgrind runs Python ~50x slower)
    python bench/instructions.py recommend  # one row

Rows: `recommend` — a recommendation for a question never asked (bench/speed.py's ten
questions, `memo.clear_questions()` before each, per-card tables kept: its "recommend, new
question" row); `wizard` — the same for the guided conversation's final questions
(`recommend_query` of every tenth line of bench/data/wizard_questions.txt, 59 of 585, in yuan
for a ¥ line, else in dollars: the answers that weighed most on bench/load.py's event loop);
`parse` — one line never seen (tests/data/parse_lines.toml, memos cleared:
speed.py's "parse (table)"). Each row runs the work 0 and N times under callgrind, at once,
and prints (Ir(N) - Ir(0)) / work units: start-up and imports cancel out.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = {"recommend": 5, "wizard": 2, "parse": 2}  # repeats under callgrind


def jobs(row: str) -> list[Callable[[], object]]:
    """`row`'s units of work: one call per question (recommend, wizard) or line (parse)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from speed import QUERIES

    from advisor.parse import parse_query
    from advisor.recommend import recommend, recommend_query

    if row == "recommend":
        return [partial(recommend, parse_query(q).workload) for q in QUERIES]
    if row == "wizard":
        return [
            partial(recommend_query, parse_query(q), "CNY" if "¥" in q else "USD")
            for q in wizard_questions()[::10]
        ]
    table = ROOT / "tests" / "data" / "parse_lines.toml"
    return [partial(parse_query, r["t"]) for r in tomllib.loads(table.read_text())["line"]]


def wizard_questions() -> list[str]:
    """bench/data/wizard_questions.txt's questions (its comment lines left out)."""
    text = (ROOT / "bench" / "data" / "wizard_questions.txt").read_text(encoding="utf-8")
    return [q for q in text.splitlines() if q.strip() and not q.startswith("#")]


def work(row: str, repeats: int) -> None:
    """Each job once (start-up), then `repeats` times as new: memos cleared before each."""
    todo = jobs(row)  # first: it puts this checkout's engine first on the path
    from advisor import memo

    for job in todo:
        job()
    for _ in range(repeats):
        for job in todo:
            memo.clear_questions()
            job()


def collected(row: str, repeats: int) -> int:
    """Instructions callgrind counted for `work(row, repeats)` in a fresh interpreter."""
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--inner",
            row,
            str(repeats),
        ],
        capture_output=True,
        text=True,
        check=True,
        # one hash seed: str hashes (set and dict order, probe chains) otherwise move the
        # count by ~0.5% from run to run
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise RuntimeError(f"no count from callgrind:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    if sys.argv[1:2] == ["--inner"]:
        work(sys.argv[2], int(sys.argv[3]))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 1
    rows = sys.argv[1:] or list(ROWS)
    for row in rows:
        repeats = ROWS[row]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            base, full = pool.map(lambda n, r=row: collected(r, n), (0, repeats))
        units = repeats * len(jobs(row))
        per = (full - base) / units
        print(
            f"{row:10} {per / 1e6:8.3f} M instructions per {'line' if row == 'parse' else 'question'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
