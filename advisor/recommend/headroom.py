"""What "runs" means on a card: the guide's headroom for a comfortable fit, and the least
free memory under which a card does not run the job at all. Every fits/does-not-fit test of
an answer goes through `runs_in`."""

from __future__ import annotations

HEADROOM = 0.20  # the guide (GPU选型, "显存误估危害"): keep at least 20% of VRAM free
# Under 1% free is shown as "0% headroom" (units.headroom rounds down), and a card at 0%
# is not one that "runs" it: an H200 at 139 of 140 GiB was "⚠️ Runs, tight (0%)". Every
# fits/does-not-fit test goes through `runs_in`, so a headline, a pick and a side-by-side
# agree (tests/test_answer_invariants.py::test_no_zero_headroom_fit).
MIN_FREE = 0.01


def runs_in(need: float, usable: float) -> bool:
    """The job's per-card figure leaves at least `MIN_FREE` of the card's usable memory."""
    return need <= usable * (1 - MIN_FREE)
