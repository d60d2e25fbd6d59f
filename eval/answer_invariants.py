"""How many generated questions break each answer invariant.

    python eval/answer_invariants.py [--examples 3]

Runs the rules of checks/answer_invariants.py over the questions of checks/answer_questions.py
(both currencies, the English answer, details and inline article, a lab's machines); prints
one line per rule: questions that break it (of all checked), then a few examples. English
words in Chinese replies are counted by tests/test_answer_chinese.py, which must find none."""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks import answer_invariants as inv  # noqa: E402
from checks.answer_questions import LABS, questions, wizard_questions  # noqa: E402

RULES = (
    "headline_figure",
    "pick_vs_warning",
    "fits_verdict",
    "guide_direction",
    "count_priced",
    "cost",
    "assumptions",
    "band",
    "budget",
    "grid",
    "headroom_said",
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=3)
    args = ap.parse_args()
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.recommend.owned import judge_machines
    from advisor.render import render

    broken: dict[str, dict[str, str]] = collections.defaultdict(dict)
    asked = questions() + wizard_questions()
    for i, q in enumerate(asked):
        parsed = parse_query(q)
        found: list[inv.Problem] = []
        for currency in ("CNY", "USD"):
            rec = recommend_query(parsed, default_currency=currency)
            found += inv.check_structure(parsed, rec)
        texts = inv.rendered(rec, parsed, q)
        found += inv.check_english(rec, texts["en/answer"])
        found += inv.headroom_said(texts["zh/answer"], "zh")
        found += inv.check_inline(rec, texts["en/inline"])
        found += inv.check_views(rec, texts["en/answer"], texts["en/details"])
        found += inv.weights_arithmetic(texts["en/details"])
        own = judge_machines(parsed.workload, LABS[i % len(LABS)])
        if own is not None:
            lab = render("lab_first", "en", own=own, group=True, chosen=False, plain=True)
            found += inv.check_owned(rec, own, lab)
        for rule, detail in found:
            broken[rule].setdefault(q, detail)
    print(f"{len(asked)} questions checked")
    print(f"{'rule':<16} {'questions':>9}")
    for rule in RULES:
        print(f"{rule:<16} {len(broken.get(rule, {})):>9}")
    for rule, items in broken.items():
        for q, detail in list(items.items())[: args.examples]:
            print(f"  {rule}: {q!r}: {detail}")


if __name__ == "__main__":
    main()
