"""What the load bench reads of a process: CPU seconds (whole and by thread) and peak RSS
from /proc, the bot's own /metrics (updates counted, memo hit rates, handler-time
histogram), percentiles, and py-spy's samples (--profile)."""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
from collections import Counter
from pathlib import Path

import aiohttp


def bucket_quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """The upper bound of the histogram bucket holding quantile `q` (cumulative counts)."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    want = buckets[-1][1] * q / 100
    return next(le for le, n in buckets if n >= want)


async def scrape_updates(port: int) -> tuple[int | None, dict[str, str], str | None]:
    """The bot's own count of updates handled (every type and outcome), from /metrics, and
    its memos' hit rates (name -> "hits/lookups"), and its own p50/p99 from receiving an
    update to its handlers being done (histogram bucket bounds): beside the bench's latency
    it says whether the wait is in the handlers or before them."""
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/metrics") as response,
        ):
            text = await response.text()
    except aiohttp.ClientError:
        return None, {}, None
    counted = 0.0
    memos: dict[str, dict[str, float]] = {}
    buckets: list[tuple[float, float]] = []
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name.startswith("bot_updates_total{"):
            counted += float(value)
        elif name.startswith("bot_update_seconds_bucket{"):
            le = name.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), float(value)))
        elif name.startswith(("bot_memo_hits_total{", "bot_memo_misses_total{")):
            memo_name = name.split('memo="', 1)[1].split('"', 1)[0]
            kind = "hits" if name.startswith("bot_memo_hits") else "misses"
            memos.setdefault(memo_name, {})[kind] = float(value)
    rates = {
        m: f"{c.get('hits', 0):.0f}/{c.get('hits', 0) + c.get('misses', 0):.0f}"
        for m, c in memos.items()
    }
    quantiles = [bucket_quantile(sorted(buckets), q) for q in (50, 99)]
    handled = (
        "p50 <= {:g} ms, p99 <= {:g} ms".format(*(x * 1000 for x in quantiles))  # type: ignore[operator]
        if None not in quantiles
        else None
    )
    return round(counted), rates, handled


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (/proc/<pid>/stat fields 14 and 15)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds so far of a process's threads, summed by kind: the event loop's, Python's
    own threads (the SQLite connections' in bot.sqlite_worker), and any named by a library (uvloop's workers)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            name = (task / "comm").read_text().strip()
        except (OSError, IndexError):
            continue  # a thread that ended meanwhile
        # the loop's thread is the process; Python's own threads (SQLite's) keep the name "python"
        name = "loop" if task.name == str(pid) else "threads" if name == "python" else name
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]
        if len(values) > 1
        else values[0]
    )


async def start_profiler(pid: int, out: Path, duration: float) -> asyncio.subprocess.Process | None:
    """py-spy sampling `pid` for `duration` seconds into `out` (collapsed stacks), or None
    with a line on stderr when py-spy is not installed."""
    exe = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if exe is None:
        print("--profile: py-spy is not installed (pip install -e '.[profile]')", file=sys.stderr)
        return None
    return await asyncio.create_subprocess_exec(
        exe, "record", "--pid", str(pid), "--duration", str(max(1, round(duration))),
        "--rate", "200", "--format", "raw", "--threads", "--output", str(out),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


def top_cumulative(collapsed: Path, n: int = 25) -> str:
    """Top-`n` functions of py-spy's collapsed stacks by cumulative share (a function counted
    once per sample it is anywhere on the stack of) and their own (leaf) share."""
    total = 0
    cumulative: Counter = Counter()
    own: Counter = Counter()
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";") if not f.startswith(("thread (", "process "))]
        total += int(count)
        for frame in set(frames):
            cumulative[frame] += int(count)
        if frames:
            own[frames[-1]] += int(count)
    rows = [f"{'cum %':>6} {'own %':>6}  function (file:line)", f"samples: {total}"]
    for frame, count in cumulative.most_common(n):
        rows.append(f"{100 * count / total:6.1f} {100 * own[frame] / total:6.1f}  {frame}")
    return "\n".join(rows)
