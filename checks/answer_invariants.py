"""An answer never contradicts itself: invariants checked over a recommendation AND the text
rendered from it (tests/test_answer_invariants.py runs them over generated questions). The
checks live by what they read: answer_structure.py (the recommendation), answer_text.py (the
English answer), answer_views.py (the other views), on the facts of answer_facts.py.

Each check returns problems as (rule, detail). The rules, written apart from the engine
(nothing here calls the engine's own verdict or guide logic to judge it):

- headline_figure: the headline's per-card figure is the estimate its terms, band and the
  picks for the same setup show, and the one the verdict is judged against.
- pick_vs_warning: no pick (rental, or a lab's own machine chosen) is a card that a ⛔ line of
  the same answer, or a hardware fact below, says cannot run the job.
- fits_verdict: ✅ / ⚠️ tight / ❌ agree with figure vs usable memory and the 20% headroom.
- guide_direction: the guide line quoted holds the headline figure and count.
- count_priced: the count shown is the count priced (card price × count).
- cost: a whole-job cost is the hourly rate × the hours shown.
- assumptions: the runtime, format, context and batch stated are those the figure used.
- band: the range shown brackets the figure.
- budget: picks within the budget asked, or the answer (and the inline article) says none is.
- grid: the "can my card run it?" grid never judges a narrower format worse than a wider one
  at the same length, nor a longer length better than a shorter one in the same format, and
  its cell for the asked format and length is the verdict's.
- headroom_policy: a recommended pick has 20% of each card free as it stands, or its own
  lines name the change that brings it to 20% ("✅ Fits with <change> → X GiB (N% …)").
- headline_vs_fix: no "does not fit" headline above a change that makes it fit; the change
  is said to make it fit, in both languages (answer, inline article, first reply).
- short_reply: the first reply (and the inline article) is at most 900 visible characters,
  in the reader's language.
- headroom_said: every headroom share the answer states of the headline setup (the verdict,
  the "Watch out" line) is one number, in both languages, and "below the guide's 20%" is
  never said of 20% or more.
"""

from __future__ import annotations

from checks.answer_facts import HEADROOM, MIN_FREE, Problem, hardware_conflicts, is_llm, picks
from checks.answer_structure import check_policy, check_structure, grid_asked_cell, grid_order
from checks.answer_text import check_english, contradictions, headline_vs_fix, headroom_said
from checks.answer_views import (
    WEIGHTS_LINE,
    check_inline,
    check_owned,
    check_short,
    check_views,
    rendered,
    weights_arithmetic,
)

__all__ = [
    "HEADROOM",
    "MIN_FREE",
    "WEIGHTS_LINE",
    "Problem",
    "check_english",
    "check_inline",
    "check_owned",
    "check_policy",
    "check_short",
    "check_structure",
    "check_views",
    "contradictions",
    "grid_asked_cell",
    "grid_order",
    "hardware_conflicts",
    "headline_vs_fix",
    "headroom_said",
    "is_llm",
    "picks",
    "rendered",
    "weights_arithmetic",
]
