"""The load bench's simulated users: the mix of quick questions, guided conversations,
inline queries and /lab in private chats and lab groups, each user closed-loop (it waits for
the reply, then thinks for an exponential pause) so that `--rate` is what they offer."""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from checks.load_probe import cpu_seconds, thread_cpu_seconds
from standin import Call, Chat, FakeTelegram, User

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
# Inline queries from any chat, and lab groups whose admin registered machines
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
    # from an update's arrival at the stand-in to the reply's (the Call's time stamp)
    latencies: list[float] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=dict)  # the same, per action kind
    # the same, to when the simulated user's coroutine woke up with the reply: adds the
    # bench's own loop delay (its users and stand-in share one loop and the 2 cores)
    woke: list[float] = field(default_factory=list)
    updates: int = 0  # inside the measured window (after --warmup)
    measure_from: float = 0.0  # perf_counter time the measured window starts
    sent: int = 0  # every update, warm-up included
    timeouts: int = 0
    expected_replies: Counter = field(default_factory=Counter)  # chat id -> replies expected
    inline_sent: int = 0  # inline queries, each answered by answerInlineQuery (not a message)
    threads_cpu: dict[str, float] = field(default_factory=dict)  # CPU s by thread, measured
    bench_cpu: float = 0.0  # this process's own CPU s (stand-in + simulated users), measured

    def record(self, kind: str, t0: float, at: float) -> None:
        """A measured update sent at `t0`: answered at `at` (the stand-in's time stamp), and
        seen by its user now."""
        self.woke.append(time.perf_counter() - t0)
        self.latencies.append(at - t0)
        self.by_kind.setdefault(kind, []).append(self.latencies[-1])


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

    async def act(make: Callable[[], dict | None], kind: str) -> Call | None:
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
            stats.record(kind, t0, reply.at)
        return reply

    while time.perf_counter() < deadline:
        if lab and rng.random() < P_INLINE:
            await inline_query(tg, user, deadline, stats, rng, think_s)
            continue
        if lab and chat.type != "private" and rng.random() < P_LAB_LIST:
            await act(lambda: tg.user_sends(user, chat, f"/lab{suffix}"), "lab")
            continue
        if rng.random() < 0.6:
            command, _, rest = rng.choice(QUICK).partition(" ")
            await act(
                lambda c=command, r=rest: tg.user_sends(user, chat, f"{c}{suffix} {r}".strip()),
                "quick",
            )
            continue
        call = await act(lambda: tg.user_sends(user, chat, f"/start{suffix}"), "start")
        for _ in range(8):  # at most 8 taps to an answer
            if call is None or time.perf_counter() >= deadline:
                break
            data = pick_button(call, rng)
            if data is None:
                break
            call = await act(lambda c=call, d=data: tg.user_clicks(user, c.result, d), "press")


async def inline_query(
    tg: FakeTelegram,
    user: User,
    deadline: float,
    stats: Stats,
    rng: random.Random,
    think_s: float = 0.0,
) -> None:
    """The user types an inline query (`@Bot ...` in any chat), timed to the bot's
    answerInlineQuery for it (an inline query is answered by that call, not a message)."""
    if think_s:
        await asyncio.sleep(rng.expovariate(1 / think_s))
    if time.perf_counter() >= deadline:
        return
    since = len(tg.calls)
    update = tg.user_inline_query(user, rng.choice(INLINE))
    qid = update["inline_query"]["id"]
    t0 = time.perf_counter()
    measured = t0 >= stats.measure_from
    stats.updates += measured
    stats.sent += 1
    stats.inline_sent += 1
    try:
        answer = await tg.wait_for(
            lambda c: c.method == "answerInlineQuery" and c.params.get("inline_query_id") == qid,
            timeout=15,
            since=since,
        )
    except TimeoutError:
        stats.timeouts += 1
        return
    if measured:
        stats.record("inline", t0, answer.at)


@contextmanager
def bench_collector_off() -> Iterator[None]:
    """This process's cyclic collector off while its users and the stand-in carry traffic,
    and run once after. The stand-in that answers the bot's calls lives in this process, so
    a pause here stalls every update in flight: a full collection of the bench's own heap
    (every call it records) paused it 65 ms inside a run (gc.callbacks, 2026-12-01), a
    pause of the harness read as the bot's latency. The bot's process is not touched; the
    echo bot's window runs under the same harness."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


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
    with bench_collector_off():
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
