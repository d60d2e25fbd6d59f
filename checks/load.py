"""Load bench: the real bot (`python -m bot`, its own process) against the Bot API stand-in
on 127.0.0.1, driven by N simulated users running quick queries and guided conversations in
private chats and lab groups. The lab groups' admins register their machines first, so
answers there start with the lab's own machines; 10% of actions are inline queries
(answered by answerInlineQuery) and 3% of group actions are /lab (`--no-lab`: without them).

    python bench/load.py                  # 200 users, 20 s
    python bench/load.py --users 50 --duration 10 --faults
    python bench/load.py --webhook        # Telegram POSTs to the bot instead of being polled

Prints updates handled per second, latency from update to reply (p50/p95/p99: from the
update's arrival at the stand-in to the reply's, both stamped by the stand-in; the same as
the simulated users woke up with their replies is printed beside it), the bot's
peak RSS, and errors. With --faults the stand-in injects 429s, 5xx, dropped connections and
slow answers; every update must still get exactly one reply. Bounded: it stops by itself
after --duration seconds (plus a drain of at most --drain seconds).

Both modes serve /metrics (polling: HEALTH_PORT; webhook: WEBHOOK_PORT); the bench scrapes it
before stopping the bot and reports what the bot counted beside what the bench sent.

Telegram's own caps (30 msg/s, 20/min per group) are lifted in the bot for this run: they
are Telegram's limits, not ours, and this bench measures our stack.

The yardstick: for --echo-duration seconds, half before the bot's window and half
after it (this machine's speed drifts within minutes), the same users at the same rate
drive bench/echo_bot.py, a bare PTB bot on the same transport, event loop and stand-in that
answers every message with one sendMessage; the bot's CPU per update is printed as a ratio
to the echo bot's (a ratio holds across machines and loads; a time does not). CPU is user +
system time of the process from /proc/<pid>/stat over the measured window. --warmup runs the
same traffic first without measuring it (the figures of a bot whose memos have filled).
LOAD_DUMP_DUPLICATES=FILE writes what the chats with a duplicate reply received.

--profile FILE samples the bot process with py-spy (`pip install -e '.[profile]'`; every
thread, so the SQLite threads count too) over the measured window and writes the
collapsed stacks to FILE (a flame graph's input: flamegraph.pl, speedscope) and the top-25
functions by cumulative share to FILE.top.txt. The sampler slows the bot: figures from a
profiled run are not the bench's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from checks.load_probe import (
    peak_rss_mb,
    percentile,
    scrape_updates,
    start_profiler,
    top_cumulative,
)
from checks.load_users import Stats, drive
from standin import (
    STANDIN_TOKEN,
    Call,
    FakeTelegram,
    FaultPlan,
    spawn_bot,
)

ROOT = Path(__file__).resolve().parent.parent


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


async def run_echo(args: argparse.Namespace, workdir: Path, seconds: float) -> dict:
    """One yardstick phase: the echo bot under the same users, rate and seed for `seconds`
    (its replies carry no buttons, so its users only ask quick questions and /start)."""
    async with FakeTelegram() as tg:
        proc = await spawn_echo(tg.base_url, str(workdir / "echo.log"))
        await tg.wait_polling(timeout=60)
        stats, cpu = await drive(tg, proc, args, seconds)
        rss = peak_rss_mb(proc.pid)
        await stop(proc, tg, args.drain)
        lost, duplicated, rejected = count_replies(tg, stats)
    return {
        "seconds": seconds,
        "stats": stats,
        "cpu": cpu,
        "rss": rss,
        "lost": lost + stats.timeouts,
        "duplicated": duplicated,
        "rejected": rejected,
    }


def echo_summary(phases: list[dict]) -> dict:
    """The echo bot's figures over its phases together (one before the bot's window, one
    after it: this machine's speed drifts within minutes, and a yardstick measured only
    before the bot read that drift as the bot's)."""
    updates = sum(p["stats"].updates for p in phases)
    latencies = [t for p in phases for t in p["stats"].latencies]
    rss = [p["rss"] for p in phases if p["rss"]]
    return {
        "updates": updates,
        "updates_per_s": round(updates / sum(p["seconds"] for p in phases), 1),
        "latency_ms": {q: round(percentile(latencies, q) * 1000, 1) for q in (50, 95, 99)},
        "cpu_ms_per_update": round(sum(p["cpu"] for p in phases) * 1000 / max(updates, 1), 3),
        "cpu_ms_per_update_by_phase": [
            round(p["cpu"] * 1000 / max(p["stats"].updates, 1), 3) for p in phases
        ],
        "peak_rss_mb": round(max(rss), 1) if rss else None,
        "lost_replies": sum(p["lost"] for p in phases),
        "duplicate_replies": sum(p["duplicated"] for p in phases),
        "rejected_by_api": sum(p["rejected"] for p in phases),
    }


async def _start_bot(
    tg: FakeTelegram, args: argparse.Namespace, workdir: Path, port: int
) -> asyncio.subprocess.Process:
    """The bot against the stand-in, its database and log in `workdir`, once it takes
    updates: on a webhook at `port`, or polling with its health endpoint (and /metrics)
    there."""
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
    return proc


async def _drive_profiled(
    tg: FakeTelegram, proc: asyncio.subprocess.Process, args: argparse.Namespace
) -> tuple[Stats, float]:
    """The users' traffic for the window (`drive`), under the sampling profiler when
    `--profile` names a file: its top functions are written beside it and printed."""
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
    return stats, bot_cpu


def _latency_figures(stats: Stats) -> dict:
    """The reply latencies' percentiles: all, the users that woke, and by kind of update."""
    return {
        "latency_ms": {q: round(percentile(stats.latencies, q) * 1000, 1) for q in (50, 95, 99)},
        "latency_ms_users_woke": {
            q: round(percentile(stats.woke, q) * 1000, 1) for q in (50, 95, 99)
        },
        # which kinds of update make the tail: a typed question, /start, a button press, ...
        "latency_ms_by_kind": {
            kind: {
                "n": len(ts),
                **{f"p{q}": round(percentile(ts, q) * 1000, 1) for q in (50, 99)},
            }
            for kind, ts in sorted(stats.by_kind.items())
        },
    }


def _cpu_figures(stats: Stats, cpu_ms: float, calls: Counter[str]) -> dict:
    """The CPU each update cost the bot (all of it and by thread) and the bench, and the Bot
    API calls each update made."""
    return {
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
    }


async def run(args: argparse.Namespace) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="advisor-load-"))
    # callers that predate the echo phase and the warm-up (tests/test_metrics.py) get neither
    echo_s = getattr(args, "echo_duration", 0) / 2  # half before the bot's window, half after
    echo_phases = [await run_echo(args, workdir, echo_s)] if echo_s > 0 else []
    async with FakeTelegram() as tg:
        if args.faults:
            tg.fault_plan = FaultPlan(
                p_429=0.01, p_5xx=0.02, p_drop=0.01, p_slow=0.02, slow_s=0.3, seed=args.seed
            )
        port = free_port()
        proc = await _start_bot(tg, args, workdir, port)
        stats, bot_cpu = await _drive_profiled(tg, proc, args)
        elapsed = args.duration  # updates are sent only inside the window; each waits for its reply
        await asyncio.sleep(min(args.drain, 2.0))  # late duplicates would show up here
        rss = peak_rss_mb(proc.pid)
        counted, memo_rates, handled = await scrape_updates(port)
        await stop(proc, tg, args.drain)
        lost, duplicated, rejected = count_replies(tg, stats)
        injected = dict(tg.injected)
        calls = Counter(c.method for c in tg.calls)
    if echo_phases:
        echo_phases.append(await run_echo(args, workdir, echo_s))
    echo = echo_summary(echo_phases) if echo_phases else None
    cpu_ms = bot_cpu * 1000 / max(stats.updates, 1)
    return {
        "users": args.users,
        "duration_s": round(elapsed, 1),
        "updates": stats.updates,
        "updates_per_s": round(stats.updates / elapsed, 1),
        **_latency_figures(stats),
        "peak_rss_mb": round(rss, 1) if rss else None,
        **_cpu_figures(stats, cpu_ms, calls),
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
        help="seconds of the same traffic against bench/echo_bot.py, half before the bot and "
        "half after (the CPU yardstick); 0: skip",
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
        help="leave out lab groups' machines, inline queries and /lab from the mix",
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
                f"CPU {echo['cpu_ms_per_update']} ms/update (before / after the bot: "
                f"{' / '.join(str(c) for c in echo['cpu_ms_per_update_by_phase'])}) · "
                f"bot / echo CPU per update: {result['cpu_ratio_to_echo']}x"
            )
        print(
            "bot CPU ms/update by thread: "
            + ", ".join(f"{n} {v}" for n, v in result["bot_cpu_ms_per_update_by_thread"].items())
            + f" · the bench itself (stand-in + users) {result['bench_cpu_ms_per_update']}"
        )
        print(
            "latency by kind (n, p50/p99 ms): "
            + ", ".join(
                f"{k} {v['n']} {v['p50']}/{v['p99']}"
                for k, v in result["latency_ms_by_kind"].items()
            )
            + " · as the simulated users woke up (adds the bench's own loop delay): "
            f"p50 {result['latency_ms_users_woke'][50]} ms, "
            f"p99 {result['latency_ms_users_woke'][99]} ms"
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
