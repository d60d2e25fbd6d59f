"""Load bench: the real bot (`python -m bot`, its own process) against the Bot API stand-in
on 127.0.0.1, driven by N simulated users running quick queries and guided conversations in
private chats and lab groups. The lab groups' admins register their machines first (issue
16), so answers there start with the lab's own machines; 10% of actions are inline queries
(answered by answerInlineQuery) and 3% of group actions are /lab (`--no-lab`: without them).

    python bench/load.py                  # 200 users, 20 s
    python bench/load.py --users 50 --duration 10 --faults
    python bench/load.py --webhook        # Telegram POSTs to the bot instead of being polled

Prints updates handled per second, latency from update to reply (p50/p95/p99), the bot's
peak RSS, and errors. With --faults the stand-in injects 429s, 5xx, dropped connections and
slow answers; every update must still get exactly one reply. Bounded: it stops by itself
after --duration seconds (plus a drain of at most --drain seconds).

Both modes serve /metrics (polling: HEALTH_PORT; webhook: WEBHOOK_PORT); the bench scrapes it
before stopping the bot and reports what the bot counted beside what the bench sent.

Telegram's own caps (30 msg/s, 20/min per group) are lifted in the bot for this run: they
are Telegram's limits, not ours, and this bench measures our stack.

The yardstick (issue 18): first, for --echo-duration seconds, the same users at the same rate
drive bench/echo_bot.py, a bare PTB bot on the same transport, event loop and stand-in that
answers every message with one sendMessage; the bot's CPU per update is printed as a ratio
to the echo bot's (a ratio holds across machines and loads; a time does not). CPU is user +
system time of the process from /proc/<pid>/stat over the measured window. --warmup runs the
same traffic first without measuring it (the figures of a bot whose memos have filled).
LOAD_DUMP_DUPLICATES=FILE writes what the chats with a duplicate reply received.

--profile FILE samples the bot process with py-spy (`pip install -e '.[profile]'`; every
thread, so the aiosqlite threads count too) over the measured window and writes the
collapsed stacks to FILE (a flame graph's input: flamegraph.pl, speedscope) and the top-25
functions by cumulative share to FILE.top.txt. The sampler slows the bot: figures from a
profiled run are not the bench's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from bot.standin import (  # noqa: E402
    STANDIN_TOKEN,
    Call,
    Chat,
    FakeTelegram,
    FaultPlan,
    User,
    spawn_bot,
)

QUICK = [
    "/vram 13B fp16",
    "/vram qwen2.5-72b int4 32k",
    "/vram llama-3.1-8b lora batch 4 on 4090",
    "/vram qlora 70b 2x3090",
    "/vram sdxl 1024 4 images",
    "/vram deepseek-v3 fp8 8 gpus",
    "/vram 7b",
    "/vram qwen2.5-14b 推理 用 3090",
    "/vram flux.1-dev",
    "/vram llama-9-900b",
    "/gpu 4090",
    "/gpus 24g",
    "/help",
    "/history",
]
TASKS = ["Run an LLM", "LoRA", "Image generation", "Coursework"]
# Issue 16: inline queries from any chat, and lab groups whose admin registered machines
# before the run (so every answer in those groups starts with the lab's own machines).
INLINE = [
    "13b fp16",
    "qwen2.5-72b int4 32k",
    "7b",
    "llama-3.1-8b lora",
    "sdxl 1024",
    "70b 半精度 推理",
    "deepseek-v3 fp8",
    "qwen2.5-14b int4 on 4090",
]
LAB_LINES = ["node1 4x a100 40g ¥3/卡时 shared, book in the sheet", "两台 3090 工作站"]
P_INLINE = 0.10  # share of a user's actions that are inline queries (the bot's run only)
P_LAB_LIST = 0.03  # share of a group member's actions that are /lab (the bot's run only)
BOT = "GpuAdvisorBot"


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    updates: int = 0  # inside the measured window (after --warmup)
    measure_from: float = 0.0  # perf_counter time the measured window starts
    sent: int = 0  # every update, warm-up included
    timeouts: int = 0
    expected_replies: Counter = field(default_factory=Counter)  # chat id -> replies expected
    inline_sent: int = 0  # inline queries, each answered by answerInlineQuery (not a message)
    threads_cpu: dict[str, float] = field(default_factory=dict)  # CPU s by thread, measured
    bench_cpu: float = 0.0  # this process's own CPU s (stand-in + simulated users), measured


def pick_button(call: Call, rng: random.Random) -> str | None:
    """What a user would tap next: a task or model at random, else a choice or skip."""
    markup = call.params.get("reply_markup") or {}
    rows = markup.get("inline_keyboard", []) if isinstance(markup, dict) else []
    buttons = [(b["text"], b["callback_data"]) for row in rows for b in row]
    choices = [
        d for t, d in buttons if d.split("|")[2:3] in (["t"], ["c"]) and not d.startswith("w|0|")
    ]
    tasks = [d for t, d in buttons if any(k in t for k in TASKS) and "|t|" in d]
    if tasks:
        return rng.choice(tasks)
    if choices:
        return rng.choice(choices)
    return None


async def one_user(
    tg: FakeTelegram,
    i: int,
    groups: list[Chat],
    deadline: float,
    stats: Stats,
    rng: random.Random,
    think_s: float = 0.0,
    lab: bool = False,
) -> None:
    user = User(10_000 + i, f"u{i}", rng.choice(["en", "zh-hans", None]))
    chat = rng.choice(groups) if groups and rng.random() < 0.3 else Chat(user.id, "private")
    suffix = f"@{BOT}" if chat.type != "private" else ""

    async def act(make: Callable[[], dict | None]) -> Call | None:
        if think_s:  # a person reads the reply before the next tap: exponential pauses
            await asyncio.sleep(rng.expovariate(1 / think_s))
        if time.perf_counter() >= deadline:
            return None
        update = make()
        assert update is not None
        stats.expected_replies[chat.id] += 1
        t0 = time.perf_counter()
        measured = t0 >= stats.measure_from
        stats.updates += measured
        stats.sent += 1
        try:
            reply = await tg.reply_to(update, timeout=15)
        except TimeoutError:
            stats.timeouts += 1
            return None
        if measured:
            stats.latencies.append(time.perf_counter() - t0)
        return reply

    async def inline() -> None:
        if think_s:
            await asyncio.sleep(rng.expovariate(1 / think_s))
        if time.perf_counter() >= deadline:
            return
        update = tg.user_inline_query(user, rng.choice(INLINE))
        qid = update["inline_query"]["id"]
        t0 = time.perf_counter()
        measured = t0 >= stats.measure_from
        stats.updates += measured
        stats.sent += 1
        stats.inline_sent += 1
        try:
            await tg.wait_for(
                lambda c: (
                    c.method == "answerInlineQuery" and c.params.get("inline_query_id") == qid
                ),
                timeout=15,
            )
        except TimeoutError:
            stats.timeouts += 1
            return
        if measured:
            stats.latencies.append(time.perf_counter() - t0)

    while time.perf_counter() < deadline:
        if lab and rng.random() < P_INLINE:
            await inline()
            continue
        if lab and chat.type != "private" and rng.random() < P_LAB_LIST:
            await act(lambda: tg.user_sends(user, chat, f"/lab{suffix}"))
            continue
        if rng.random() < 0.6:
            command, _, rest = rng.choice(QUICK).partition(" ")
            await act(
                lambda c=command, r=rest: tg.user_sends(user, chat, f"{c}{suffix} {r}".strip())
            )
            continue
        call = await act(lambda: tg.user_sends(user, chat, f"/start{suffix}"))
        for _ in range(8):  # at most 8 taps to an answer
            if call is None or time.perf_counter() >= deadline:
                break
            data = pick_button(call, rng)
            if data is None:
                break
            call = await act(lambda c=call, d=data: tg.user_clicks(user, c.result, d))


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_webhook(tg: FakeTelegram, timeout: float) -> None:
    end = time.monotonic() + timeout
    while tg.webhook is None:
        if time.monotonic() > end:
            raise TimeoutError("the bot did not set its webhook")
        await asyncio.sleep(0.05)


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
    own threads (aiosqlite's connections), and any named by a library (uvloop's workers)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            name = (task / "comm").read_text().strip()
        except (OSError, IndexError):
            continue  # a thread that ended meanwhile
        # the loop's thread is the process; Python's own threads (aiosqlite's) are unnamed
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


async def spawn_echo(base_url: str, log_path: str) -> asyncio.subprocess.Process:
    """bench/echo_bot.py as its own process against the same stand-in (see its docstring)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TELEGRAM_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "TELEGRAM_BOT_TOKEN": STANDIN_TOKEN,
        "TELEGRAM_API_BASE_URL": base_url,
    }
    log = open(log_path, "ab")  # noqa: SIM115 - the child keeps it
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "bench" / "echo_bot.py"), env=env, stdout=log, stderr=log
        )
    finally:
        log.close()


async def register_labs(tg: FakeTelegram, groups: list[Chat], stats: Stats) -> None:
    """Each lab group's admin registers its machines (`/lab@Bot <line>`) before the run."""
    for g, group in enumerate(groups):
        admin = User(900_000 + g, f"admin{g}", "zh-hans")
        tg.admins.add(admin.id)
        for line in LAB_LINES:
            stats.sent += 1
            stats.expected_replies[group.id] += 1
            await tg.reply_to(tg.user_sends(admin, group, f"/lab@{BOT} {line}"), timeout=15)


async def drive(
    tg: FakeTelegram,
    proc: asyncio.subprocess.Process,
    args: argparse.Namespace,
    duration: float,
    lab: bool = False,
) -> tuple[Stats, float]:
    """Simulated users for --warmup + `duration` seconds; returns their stats and the
    process's CPU seconds over the last `duration` (the measured window). `lab`: lab groups
    register machines first, and the mix includes inline queries and /lab (the bot's run;
    the echo bot answers neither)."""
    rng = random.Random(args.seed)
    groups = [Chat(-100_000 - g, "supergroup", f"lab {g}") for g in range(max(1, args.users // 20))]
    stats = Stats()
    if lab:
        await register_labs(tg, groups, stats)
    stats.measure_from = time.perf_counter() + getattr(args, "warmup", 0.0)
    deadline = stats.measure_from + duration
    cpu0: list[float] = []

    async def window_starts() -> None:
        await asyncio.sleep(max(0.0, stats.measure_from - time.perf_counter()))
        cpu0.append(cpu_seconds(proc.pid) or 0.0)
        stats.threads_cpu = thread_cpu_seconds(proc.pid)
        stats.bench_cpu = time.process_time()

    think = args.users / args.rate if args.rate else 0.0
    await asyncio.gather(
        window_starts(),
        *(one_user(tg, i, groups, deadline, stats, rng, think, lab) for i in range(args.users)),
    )
    after = thread_cpu_seconds(proc.pid)
    stats.bench_cpu = time.process_time() - stats.bench_cpu
    stats.threads_cpu = {
        name: round(cpu - stats.threads_cpu.get(name, 0.0), 2) for name, cpu in after.items()
    }
    return stats, (cpu_seconds(proc.pid) or 0.0) - cpu0[0]


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


def _replies(tg: FakeTelegram) -> list[tuple[int, Call]]:
    """Every reply the bot made, one per answered update: a send or an edit, less the later
    parts of a reply longer than one message (the bot sends the rest as further messages
    that quote what the first part answered, with other text). The same text sent again to
    the same message is a duplicate and counts. (A new message quoting a message that was
    answered before with other text would also read as a later part; the bench's users
    never press the buttons under an answer, the only way to get one.)"""
    out: list[tuple[int, Call]] = []
    first: dict[tuple[int, int], str] = {}  # (chat, message answered) -> its reply's text
    for c in tg.calls:
        if (
            c.error is not None
            and "not modified" not in c.error
            or c.method not in ("sendMessage", "editMessageText")
            or "force_reply" in (c.params.get("reply_markup") or {})
        ):
            continue
        chat = int(c.params["chat_id"])
        if c.method == "editMessageText":
            answered = c.params.get("message_id")
        else:
            answered = (c.params.get("reply_parameters") or {}).get("message_id")
        key = (chat, int(answered)) if answered is not None else None
        text = str(c.params.get("text", ""))
        if key is not None and c.method == "sendMessage" and first.get(key, text) != text:
            continue  # the next part of a long reply
        if key is not None:
            first[key] = text
        out.append((chat, c))
    return out


def count_replies(tg: FakeTelegram, stats: Stats) -> tuple[int, int, int]:
    """(lost, duplicated, rejected by the API) from what the stand-in saw."""
    replies: Counter = Counter()
    for chat, _ in _replies(tg):
        replies[chat] += 1
    rejected = [
        c
        for c in tg.calls
        if c.error
        and not c.error.startswith(("injected", "dropped"))
        and "not modified" not in c.error
    ]
    inline_answered = sum(
        1 for c in tg.calls if c.method == "answerInlineQuery" and c.error is None
    )
    lost = max(0, stats.inline_sent - inline_answered)
    lost += sum(max(0, n - replies[chat]) for chat, n in stats.expected_replies.items())
    duplicated = sum(max(0, replies[chat] - n) for chat, n in stats.expected_replies.items())
    if duplicated and os.environ.get("LOAD_DUMP_DUPLICATES"):
        # diagnosis: every reply those chats got, in order
        chats = {str(c) for c, n in stats.expected_replies.items() if replies[c] > n}
        seen = [
            {
                "chat": c.params.get("chat_id"),
                "method": c.method,
                "error": c.error,
                "quotes": (c.params.get("reply_parameters") or {}).get("message_id"),
                "edits": c.params.get("message_id"),
                "length": len(str(c.params.get("text", ""))),
                "text": str(c.params.get("text", ""))[:200],
            }
            for c in tg.calls
            if str(c.params.get("chat_id", "")) in chats
        ]
        dump = json.dumps(seen, ensure_ascii=False, indent=1)
        Path(os.environ["LOAD_DUMP_DUPLICATES"]).write_text(dump)
    return lost, duplicated, len(rejected)


async def stop(proc: asyncio.subprocess.Process, tg: FakeTelegram, drain: float) -> None:
    proc.send_signal(signal.SIGTERM)
    tg.release_pollers()
    try:
        await asyncio.wait_for(proc.wait(), drain)
    except TimeoutError:
        proc.kill()
        await proc.wait()


async def run_echo(args: argparse.Namespace, workdir: Path) -> dict:
    """The yardstick phase: the echo bot under the same users, rate and seed (its replies
    carry no buttons, so its users only ask quick questions and /start)."""
    async with FakeTelegram() as tg:
        proc = await spawn_echo(tg.base_url, str(workdir / "echo.log"))
        await tg.wait_polling(timeout=60)
        stats, cpu = await drive(tg, proc, args, args.echo_duration)
        rss = peak_rss_mb(proc.pid)
        await stop(proc, tg, args.drain)
        lost, duplicated, rejected = count_replies(tg, stats)
    return {
        "updates": stats.updates,
        "updates_per_s": round(stats.updates / args.echo_duration, 1),
        "latency_ms": {q: round(percentile(stats.latencies, q) * 1000, 1) for q in (50, 95, 99)},
        "cpu_ms_per_update": round(cpu * 1000 / max(stats.updates, 1), 3),
        "peak_rss_mb": round(rss, 1) if rss else None,
        "lost_replies": lost + stats.timeouts,
        "duplicate_replies": duplicated,
        "rejected_by_api": rejected,
    }


async def run(args: argparse.Namespace) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="advisor-load-"))
    # callers that predate the echo phase and the warm-up (tests/test_metrics.py) get neither
    echo = await run_echo(args, workdir) if getattr(args, "echo_duration", 0) > 0 else None
    async with FakeTelegram() as tg:
        if args.faults:
            tg.fault_plan = FaultPlan(
                p_429=0.01, p_5xx=0.02, p_drop=0.01, p_slow=0.02, slow_s=0.3, seed=args.seed
            )
        port = free_port()
        env = {"WEBHOOK_LISTEN": "127.0.0.1"}
        if args.webhook:
            env |= {
                "WEBHOOK_URL": f"http://127.0.0.1:{port}/telegram",
                "WEBHOOK_SECRET": "load-bench-secret",
                "WEBHOOK_PORT": str(port),
            }
        else:
            env["HEALTH_PORT"] = str(port)
        proc = await spawn_bot(
            tg.base_url, str(workdir / "bot.sqlite3"), log_path=str(workdir / "bot.log"), **env
        )
        if args.webhook:
            await wait_webhook(tg, timeout=60)
        else:
            await tg.wait_polling(timeout=60)
        profile = getattr(args, "profile", None)
        profiler = None
        if profile:
            # sampled from the start of traffic: the warm-up, if any, is in the profile too
            profiler = await start_profiler(proc.pid, Path(profile), args.warmup + args.duration)
        stats, bot_cpu = await drive(tg, proc, args, args.duration, lab=getattr(args, "lab", False))
        if profiler is not None:
            await profiler.wait()
            if Path(profile).exists():
                top = top_cumulative(Path(profile))
                Path(f"{profile}.top.txt").write_text(top + "\n")
                print(top, file=sys.stderr)
        elapsed = args.duration  # updates are sent only inside the window; each waits for its reply
        await asyncio.sleep(min(args.drain, 2.0))  # late duplicates would show up here
        rss = peak_rss_mb(proc.pid)
        counted, memo_rates, handled = await scrape_updates(port)
        await stop(proc, tg, args.drain)
        lost, duplicated, rejected = count_replies(tg, stats)
        injected = dict(tg.injected)
        calls = Counter(c.method for c in tg.calls)
    cpu_ms = bot_cpu * 1000 / max(stats.updates, 1)
    return {
        "users": args.users,
        "duration_s": round(elapsed, 1),
        "updates": stats.updates,
        "updates_per_s": round(stats.updates / elapsed, 1),
        "latency_ms": {q: round(percentile(stats.latencies, q) * 1000, 1) for q in (50, 95, 99)},
        "peak_rss_mb": round(rss, 1) if rss else None,
        "bot_cpu_ms_per_update": round(cpu_ms, 2),
        # The bench shares the machine: its own CPU is what the bot cannot have.
        "bench_cpu_ms_per_update": round(stats.bench_cpu * 1000 / max(stats.updates, 1), 2),
        "bot_cpu_ms_per_update_by_thread": {
            name: round(cpu * 1000 / max(stats.updates, 1), 2)
            for name, cpu in sorted(stats.threads_cpu.items(), key=lambda kv: -kv[1])
        },
        "api_calls_per_update": {
            m: round(n / max(stats.updates, 1), 2) for m, n in calls.most_common()
        },
        "echo": echo,
        "cpu_ratio_to_echo": (
            round(cpu_ms / echo["cpu_ms_per_update"], 2)
            if echo and echo["cpu_ms_per_update"]
            else None
        ),
        "offered_rate": args.rate,
        "timeouts": stats.timeouts,
        "lost_replies": lost,
        "duplicate_replies": duplicated,
        "rejected_by_api": rejected,
        "faults_injected": injected,
        "mode": "webhook" if args.webhook else "polling",
        "metrics_updates_counted": counted,
        "updates_sent_with_warmup": stats.sent,
        "inline_queries": stats.inline_sent,
        "memo_hits": memo_rates,
        "bot_handled": handled,
        "load_average": os.getloadavg(),
        "bot_log": str(workdir / "bot.log"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--users", type=int, default=200)
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of traffic")
    ap.add_argument("--drain", type=float, default=15.0, help="seconds to wait for the bot to stop")
    ap.add_argument(
        "--rate",
        type=float,
        default=320.0,
        help="updates/s all users together aim for (think time = users / rate); 0: no pauses",
    )
    ap.add_argument(
        "--faults", action="store_true", help="inject 429 / 5xx / dropped / slow answers"
    )
    ap.add_argument(
        "--webhook", action="store_true", help="webhook mode: the stand-in POSTs the updates"
    )
    ap.add_argument(
        "--echo-duration",
        type=float,
        default=10.0,
        help="seconds of the same traffic against bench/echo_bot.py first (the CPU yardstick); 0: skip",
    )
    ap.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="seconds of the same traffic before the measured window (each bot), so the "
        "figures are for a bot whose memos have filled; 0: measure from the first update",
    )
    ap.add_argument(
        "--no-lab",
        dest="lab",
        action="store_false",
        help="leave out lab groups' machines, inline queries and /lab (issue 16) from the mix",
    )
    ap.add_argument(
        "--profile",
        metavar="FILE",
        help="sample the bot with py-spy over the traffic: collapsed stacks to FILE, "
        "the top-25 cumulative list to FILE.top.txt",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        lat = result["latency_ms"]
        print(
            f"users {result['users']} · {result['updates']} updates in {result['duration_s']} s · "
            f"{result['updates_per_s']} updates/s · latency p50 {lat[50]} ms, p95 {lat[95]} ms, p99 {lat[99]} ms · "
            f"peak RSS {result['peak_rss_mb']} MB · bot CPU {result['bot_cpu_ms_per_update']} ms/update"
            f" · {result['mode']}, /metrics counted {result['metrics_updates_counted']}"
            f" of {result['updates_sent_with_warmup']} updates sent"
        )
        if echo := result["echo"]:
            print(
                f"echo bot (same transport, stand-in, users and rate): {echo['updates']} updates · "
                f"{echo['updates_per_s']} updates/s · p99 {echo['latency_ms'][99]} ms · "
                f"CPU {echo['cpu_ms_per_update']} ms/update · "
                f"bot / echo CPU per update: {result['cpu_ratio_to_echo']}x"
            )
        print(
            "bot CPU ms/update by thread: "
            + ", ".join(f"{n} {v}" for n, v in result["bot_cpu_ms_per_update_by_thread"].items())
            + f" · the bench itself (stand-in + users) {result['bench_cpu_ms_per_update']}"
        )
        print(
            "API calls per update: "
            + ", ".join(f"{m} {n}" for m, n in result["api_calls_per_update"].items())
        )
        print(
            f"the bot's own time from receiving an update to its handlers done: {result['bot_handled']}"
        )
        print(
            "memo hits/lookups (since start): "
            + ", ".join(f"{m} {r}" for m, r in result["memo_hits"].items())
        )
        print(
            "load average (1, 5, 15 min) at the end: "
            + ", ".join(f"{x:.2f}" for x in result["load_average"])
        )
        print(
            f"errors: timeouts {result['timeouts']}, lost replies {result['lost_replies']}, "
            f"duplicates {result['duplicate_replies']}, rejected by the API {result['rejected_by_api']}"
            + (
                f" · faults injected {result['faults_injected']}"
                if result["faults_injected"]
                else ""
            )
        )
    ok = not (
        result["timeouts"]
        or result["lost_replies"]
        or result["duplicate_replies"]
        or result["rejected_by_api"]
        or result["metrics_updates_counted"] != result["updates_sent_with_warmup"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
