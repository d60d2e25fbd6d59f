"""Durability bench: the real bot (`python -m bot`, its own process) against the Bot API
stand-in, a steady stream of questions, and SIGKILLs at random moments; each kill is
followed at once by a fresh start on the same database.

    python bench/durability.py                      # 300 questions/s for 60 s, 30 kills
    python bench/durability.py --rate 150 --duration 6 --kills 8 --kill-gap 1

Traffic: quick questions from many private chats at --rate (open loop: sent on schedule,
whatever the bot is doing), wizard users walking to an answer, users who ask, send /forget
and confirm it. Button answers expire after --answer-window seconds, as Telegram's do, so
presses replayed after a restart meet "query is too old".

Checked after a clean stop (SIGTERM), and printed: every update answered at least once,
every question stored exactly once, every confirmed /forget done with nothing of those
users left, the database passes quick_check and another connection can write to it.
`tests/test_durability.py` runs a short version of this in the suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from advisor.parse import parse_query
from standin import Call, FakeTelegram, User, spawn_bot

WIZARD_PATH = ("Run an LLM", "Qwen2.5-7B", "INT8", "32k", "Skip", "¥10/h")
# Quick questions carry "batch N" (unique, findable in replies) from FIRST_BATCH up; /forget
# users' questions from FORGET_BATCH up; the engine takes batches up to 65536.
FIRST_BATCH = 1000
FORGET_BATCH = 60_000
# A wizard step or /forget waits its turn behind the whole backlog and several restarts.
REPLY_TIMEOUT_S = 120.0


@dataclass
class Plan:
    rate_per_s: float = 300.0
    duration_s: float = 60.0
    kills: int = 30
    quick_users: int = 100
    wizard_users: int = 10
    forget_users: int = 10
    answer_window_s: float = 2.0
    kill_gap_s: float = 3.0  # each kill: a random 0..kill_gap_s after the bot polls again
    drain_s: float = 60.0
    seed: int = 1


@dataclass
class Outcome:
    updates: int = 0
    questions: int = 0
    kills: int = 0
    unanswered: list[str] = field(default_factory=list)
    history_missing: int = 0
    history_duplicated: int = 0
    wizards_done: int = 0
    forgets_done: int = 0
    forgotten_left: dict[str, int] = field(default_factory=dict)
    inbox_left: int = 0
    exit_code: int | None = None
    quick_check: str = ""
    writable_after: bool = False
    replayed_answers_refused: int = 0
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            not self.unanswered
            and self.history_missing == 0
            and self.history_duplicated == 0
            and not any(self.forgotten_left.values())
            and self.quick_check == "ok"
            and self.writable_after
            and self.exit_code == 0
        )


def _buttons(call: Call) -> list[tuple[str, str]]:
    markup = call.params.get("reply_markup") or {}
    rows = markup.get("inline_keyboard", []) if isinstance(markup, dict) else []
    return [(b["text"], b["callback_data"]) for row in rows for b in row]


def _answered(c: Call, chat_id: int, since: int) -> bool:
    return (
        c.seq >= since
        and c.method in ("sendMessage", "editMessageText")
        and (c.error is None or "not modified" in c.error)
        and str(c.params.get("chat_id")) == str(chat_id)
    )


async def _reply_with(
    tg: FakeTelegram,
    chat_id: int,
    since: int,
    needle: str,
    timeout_s: float = REPLY_TIMEOUT_S,
    changed: bool = False,
) -> Call:
    """The bot's first message or edit in the chat, from `since` on, whose text or buttons
    contain `needle` (replays may send other messages in between). `changed`: an edit that
    changed the message, not one refused as "not modified": a replayed earlier press
    re-shows the page before, whose buttons (Skip) can hold the needle too; pressing them
    answered the previous step again (a false "unanswered" in 1 run of ~4)."""

    def match(c: Call) -> bool:
        shown = str(c.params.get("text", "")) + " ".join(t for t, _ in _buttons(c))
        fresh = not changed or c.error is None
        return _answered(c, chat_id, since) and fresh and needle in shown

    try:
        return await tg.wait_for(match, timeout=timeout_s)
    except TimeoutError:
        raise TimeoutError(f"no reply with {needle!r}") from None


async def _press(tg: FakeTelegram, user: User, call: Call, label: str, needle: str) -> Call:
    data = next(d for t, d in _buttons(call) if label in t)
    since = len(tg.calls)
    message = tg.messages.get((user.id, call.result["message_id"]), call.result)
    tg.user_clicks(user, message, data)
    return await _reply_with(tg, user.id, since, needle, changed=True)


async def _wizard_user(tg: FakeTelegram, user: User, out: Outcome, _: int) -> None:
    try:
        since = len(tg.calls)
        tg.user_sends(user, text="/start")
        out.updates += 1
        step = await _reply_with(tg, user.id, since, WIZARD_PATH[0])
        for label, after in zip(WIZARD_PATH, (*WIZARD_PATH[1:], "VRAM per card"), strict=True):
            out.updates += 1
            step = await _press(tg, user, step, label, after)
        out.wizards_done += 1
    except (TimeoutError, StopIteration) as exc:
        out.unanswered.append(f"wizard {user.id}: {exc!r}")
        if os.environ.get("DURABILITY_TRACE"):  # diagnosis: what that chat saw, in order
            trace = [
                f"{c.seq} {c.method} {c.error or ''} {str(c.params.get('text', ''))!r} {c.params.get('reply_markup')!r:.300}"
                f" {str(c.params.get('callback_query_id') or c.params.get('message_id') or '')}"
                for c in tg.calls
                if str(c.params.get("chat_id")) == str(user.id) or c.method == "answerCallbackQuery"
            ]
            kills = f"kills at seq {getattr(tg, 'calls_at_kills', [])}"
            Path(os.environ["DURABILITY_TRACE"]).write_text("\n".join([kills, *trace]))


async def _forget_user(tg: FakeTelegram, user: User, out: Outcome, i: int) -> None:
    batch = FORGET_BATCH + 10 * i
    try:
        for k in range(2):
            since = len(tg.calls)
            tg.user_sends(user, text=f"/vram 13b batch {batch + k}")
            out.updates += 1
            await _reply_with(tg, user.id, since, f"batch {batch + k}")
        since = len(tg.calls)
        tg.user_sends(user, text="/forget")
        out.updates += 1
        confirm = await _reply_with(tg, user.id, since, "Yes, delete")
        out.updates += 1
        await _press(tg, user, confirm, "Yes, delete", "Deleted")
        out.forgets_done += 1
    except (TimeoutError, StopIteration) as exc:
        out.unanswered.append(f"forget {user.id}: {exc!r}")


def _batch_numbers() -> Iterator[int]:
    """Batch sizes the parser reads back as batch sizes: "batch 2080" names a GeForce card
    (a first run of this bench counted its answer, "batch 1", as missing)."""
    n = FIRST_BATCH
    while True:
        parsed = parse_query(f"7b batch {n}")
        if parsed.workload is not None and parsed.workload.batch_size == n:
            yield n
        n += 1


async def _stream(tg: FakeTelegram, plan: Plan, users: list[User], out: Outcome) -> dict:
    """Quick questions on schedule; returns {batch number: user} of what was sent."""
    sent: dict[int, User] = {}
    batches = _batch_numbers()
    start = time.monotonic()
    n = 0
    total = round(plan.rate_per_s * plan.duration_s)
    while n < total:
        elapsed = time.monotonic() - start
        while n < min(total, elapsed * plan.rate_per_s):
            user, batch = users[n % len(users)], next(batches)
            tg.user_sends(user, text=f"/vram 7b batch {batch}")
            sent[batch] = user
            n += 1
        await asyncio.sleep(0.01)
    out.updates += n
    out.questions += n
    return sent


def _answered_batches(tg: FakeTelegram) -> set[int]:
    found: set[int] = set()
    for c in tg.calls:
        if c.method == "sendMessage" and c.error is None:
            found.update(int(b) for b in re.findall(r"batch (\d+)", str(c.params.get("text"))))
    return found


async def run_durability(workdir: Path, plan: Plan) -> Outcome:
    rng = random.Random(plan.seed)
    db, log = workdir / "bot.sqlite3", workdir / "bot.log"
    out = Outcome()
    began = time.monotonic()
    async with FakeTelegram() as tg:
        tg.callback_answer_window_s = plan.answer_window_s
        tg.calls_at_kills = []  # type: ignore[attr-defined]
        proc = await spawn_bot(tg.base_url, str(db), log_path=str(log))
        await tg.wait_polling(timeout=60)

        async def killer() -> None:
            """Each kill lands at a random moment after the bot is polling again: in the
            middle of its inbox replay, a backlog, a /forget or a wizard step."""
            nonlocal proc
            for _ in range(plan.kills):
                await asyncio.sleep(rng.uniform(0.0, plan.kill_gap_s))
                proc.kill()
                await proc.wait()
                out.kills += 1
                tg.calls_at_kills.append(len(tg.calls))  # for DURABILITY_TRACE
                proc = await spawn_bot(tg.base_url, str(db), log_path=str(log))
                await tg.wait_polling(timeout=60)

        quick = [User(20_000 + i, f"q{i}", "en") for i in range(plan.quick_users)]
        wizards = [User(30_000 + i, f"w{i}", "en") for i in range(plan.wizard_users)]
        forgetters = [User(40_000 + i, f"f{i}", "en") for i in range(plan.forget_users)]
        flows: list[asyncio.Task] = []

        async def spread(users: list[User], flow: Callable[..., Awaitable[None]]) -> None:
            """Wizards and /forget confirmations start throughout the stream."""
            for i, user in enumerate(users):
                await asyncio.sleep(plan.duration_s / (len(users) + 1))
                flows.append(asyncio.ensure_future(flow(tg, user, out, i)))

        results = await asyncio.gather(
            _stream(tg, plan, quick, out),
            killer(),
            spread(wizards, _wizard_user),
            spread(forgetters, _forget_user),
        )
        await asyncio.gather(*flows)
        sent: dict[int, User] = results[0]
        drain_until = time.monotonic() + plan.drain_s
        while time.monotonic() < drain_until and not set(sent) <= _answered_batches(tg):
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)  # let the last inbox rows be marked done

        await _stop_bot(tg, proc, out)
        _count_answers(tg, sent, out)
    _check_database(db, sent, forgetters, out)
    out.elapsed_s = time.monotonic() - began
    return out


async def _stop_bot(tg: FakeTelegram, proc: asyncio.subprocess.Process, out: Outcome) -> None:
    """SIGTERM, as a deploy stops the bot, with the pollers let go: its exit code, or a kill
    when it has not exited in 15 s."""
    proc.send_signal(signal.SIGTERM)
    tg.release_pollers()
    try:
        out.exit_code = await asyncio.wait_for(proc.wait(), 15)
    except TimeoutError:
        proc.kill()
        await proc.wait()


def _count_answers(tg: FakeTelegram, sent: dict[int, User], out: Outcome) -> None:
    """The question batches sent and never answered, and the button presses replayed after
    their callback query expired (refused by the Bot API as too old)."""
    answered = _answered_batches(tg)
    out.unanswered += [f"question batch {b}" for b in sorted(set(sent) - answered)]
    out.replayed_answers_refused = sum(
        1 for c in tg.sent("answerCallbackQuery") if c.error and "too old" in c.error
    )


def _check_database(db: Path, sent: dict[int, User], forgotten: list[User], out: Outcome) -> None:
    con = sqlite3.connect(db, timeout=5)
    try:
        rows = con.execute("SELECT user_id, raw_text, COUNT(*) FROM history GROUP BY 1, 2")
        stored = {(u, t): n for u, t, n in rows}
        for batch, user in sent.items():
            n = stored.get((user.id, f"7b batch {batch}"), 0)
            out.history_missing += n == 0
            out.history_duplicated += max(0, n - 1)
        ids = [u.id for u in forgotten]
        marks = ",".join("?" * len(ids))
        keys = [str(i) for i in ids]
        out.forgotten_left = {
            "history": con.execute(
                f"SELECT COUNT(*) FROM history WHERE user_id IN ({marks})", ids
            ).fetchone()[0],
            "users": con.execute(
                f"SELECT COUNT(*) FROM users WHERE user_id IN ({marks})", ids
            ).fetchone()[0],
            "chats": con.execute(
                f"SELECT COUNT(*) FROM chats WHERE chat_id IN ({marks})", ids
            ).fetchone()[0],
            "saved_state": con.execute(
                f"SELECT COUNT(*) FROM ptb_state WHERE key IN ({marks}) "
                f"OR json_extract(key, '$[#-1]') IN ({marks})",
                [*keys, *ids],
            ).fetchone()[0],
        }
        out.inbox_left = con.execute("SELECT COUNT(*) FROM inbox").fetchone()[0]
        out.quick_check = con.execute("PRAGMA quick_check").fetchone()[0]
        con.execute("BEGIN IMMEDIATE")  # another connection can take the write lock
        con.execute("INSERT INTO inbox VALUES (-1, '{}', 'durability check')")
        con.execute("ROLLBACK")
        out.writable_after = True
    except sqlite3.OperationalError as exc:
        print(f"database check failed: {exc}", file=sys.stderr)
    finally:
        con.close()


def summary(plan: Plan, out: Outcome) -> dict:
    return {
        "ok": out.ok,
        "offered_updates_per_s": plan.rate_per_s,
        "stream_s": plan.duration_s,
        "updates": out.updates,
        "questions": out.questions,
        "sigkills": out.kills,
        "wizards_finished": out.wizards_done,
        "forgets_confirmed_and_done": out.forgets_done,
        "unanswered": len(out.unanswered),
        "history_missing": out.history_missing,
        "history_duplicated": out.history_duplicated,
        "forgotten_rows_left": sum(out.forgotten_left.values()),
        "inbox_left_after_clean_stop": out.inbox_left,
        "replayed_presses_refused_as_too_old": out.replayed_answers_refused,
        "quick_check": out.quick_check,
        "writable_by_another_connection": out.writable_after,
        "exit_code_on_sigterm": out.exit_code,
        "elapsed_s": round(out.elapsed_s, 1),
        "first_unanswered": out.unanswered[:5],
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rate", type=float, default=300.0, help="quick questions per second")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of traffic")
    ap.add_argument("--kills", type=int, default=30, help="SIGKILLs, one after another")
    ap.add_argument(
        "--kill-gap", type=float, default=3.0, help="a kill comes 0..this many s after a start"
    )
    ap.add_argument(
        "--drain", type=float, default=300.0, help="seconds allowed to answer the backlog"
    )
    ap.add_argument("--wizards", type=int, default=10)
    ap.add_argument("--forgets", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    plan = Plan(
        rate_per_s=args.rate,
        duration_s=args.duration,
        kills=args.kills,
        kill_gap_s=args.kill_gap,
        drain_s=args.drain,
        wizard_users=args.wizards,
        forget_users=args.forgets,
        seed=args.seed,
    )
    workdir = Path(tempfile.mkdtemp(prefix="advisor-durability-"))
    out = asyncio.run(run_durability(workdir, plan))
    print(json.dumps(summary(plan, out), ensure_ascii=False, indent=2))
    print(f"bot log: {workdir / 'bot.log'}")
    return 0 if out.ok else 1


if __name__ == "__main__":
    sys.exit(main())
