"""One figure per (card, count) in a rendered English answer, and every headroom % agreeing
with the figures beside it (tests/test_answer_generated.py, checks/answer_invariants.py)."""

from __future__ import annotations

import re

_HEAD = re.compile(
    r"^(\d+)× (.+?) \((?:your setup|the cheapest pick(?: per hour)?"
    r"|the pick that costs least for the whole job)\): VRAM per card ~([\d.]+) GiB of ([\d.]+) GiB"
)
_HEAD_VERDICT = re.compile(r"^(?:✅ Fits with|⚠️ Fits, but tight \()(\d+)% headroom")
_PICK = re.compile(r"^• (\d+)× (.+?) — ")
_PICK_FIGURE = re.compile(r"^  ([\d.]+) GiB per card of ([\d.]+) GiB")
_PICK_TIGHT = re.compile(
    r"Tight as is \((\d+)% headroom\): .* → ([\d.]+) GiB per card \((\d+)% headroom\)"
)


def _headroom_ok(shown_pct: str, need: str, usable: str) -> bool:
    """A headroom % agrees with the two figures beside it (each rounded to 0.1 GiB)."""
    return abs(int(shown_pct) - (1 - float(need) / float(usable)) * 100) <= 1.5


def figures_disagree(text: str) -> list[str]:
    """One figure per (card, count) in an answer, and every headroom % matching its
    figures: the headline and each option line, read from the rendered English answer."""
    seen: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := _HEAD.match(line):
            count, name, need, usable = m.groups()
            seen.setdefault((count, name), need)
            if (v := _HEAD_VERDICT.match(lines[i + 1] if i + 1 < len(lines) else "")) and (
                not _headroom_ok(v.group(1), need, usable)
            ):
                problems.append(f"headline headroom {v.group(1)}% beside {need} of {usable}")
        elif m := _PICK.match(line):
            key = (m.group(1), m.group(2))
            f = _PICK_FIGURE.match(lines[i + 1]) if i + 1 < len(lines) else None
            if f is None:
                continue
            need, usable = f.groups()
            if seen.setdefault(key, need) != need:
                problems.append(f"{key}: {seen[key]} and {need} GiB per card")
            for later in lines[i + 2 : i + 6]:
                if not later.startswith("  "):
                    break  # the next option
                if t := _PICK_TIGHT.search(later):
                    if not _headroom_ok(t.group(1), need, usable):
                        problems.append(f"{key}: {t.group(1)}% headroom beside {need} of {usable}")
                    if not _headroom_ok(t.group(3), t.group(2), usable):
                        problems.append(f"{key}: fixed {t.group(3)}% beside {t.group(2)}")
    return problems
