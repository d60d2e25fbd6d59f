"""The durability bar, short enough for every CI run: the real `python -m bot`
against the stand-in, questions streamed at 150 updates/s, 8 SIGKILLs at random moments
(each followed by a restart on the same database), wizard users and /forget confirmations
in the mix, button answers expiring as Telegram's do. `bench/durability.py` is the long
version with figures."""

from __future__ import annotations

from pathlib import Path

from checks.durability import Plan, run_durability, summary

CI_PLAN = Plan(
    rate_per_s=150,
    duration_s=4,
    kills=8,
    kill_gap_s=1.5,
    quick_users=50,
    wizard_users=5,
    forget_users=5,
    answer_window_s=2.0,
    drain_s=45,
    seed=14,
)


async def test_sigkills_under_a_150_per_s_stream_lose_no_update_and_no_forget(
    tmp_path: Path,
) -> None:
    out = await run_durability(tmp_path, CI_PLAN)
    figures = summary(CI_PLAN, out)
    assert out.kills == 8, figures
    assert out.questions >= 150 * 4, figures
    assert out.unanswered == [], figures  # every update answered at least once
    assert (out.history_missing, out.history_duplicated) == (0, 0), figures  # exactly once
    assert out.forgets_done == CI_PLAN.forget_users, figures
    assert out.forgotten_left == {"history": 0, "users": 0, "chats": 0, "saved_state": 0}
    assert out.wizards_done >= CI_PLAN.wizard_users, figures  # each finished at least once
    assert out.exit_code == 0 and out.inbox_left == 0, figures  # a clean stop finishes all
    assert out.quick_check == "ok" and out.writable_after, figures
