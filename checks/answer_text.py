"""Answer invariants on the English answer's text: every figure, state, price and assumption
it prints is the recommendation's, one headroom share is said of the headline setup, and no
"does not fit" stands above a change that makes it fit."""

from __future__ import annotations

import re

from advisor import catalog
from advisor.recommend import Recommendation
from advisor.render import gib, label
from checks.answer_facts import HEADROOM, Problem, picks
from checks.figures import figures_disagree

_ZERO_RUNS = {
    "en": re.compile(r"(✅ Fits|Runs, tight)[^\n]*?\(0% headroom"),
    "zh": re.compile(r"(✅ 装得下|能跑，但偏紧)[^\n]*?余量 0%"),
}
_BAND_OVER = {
    "en": re.compile(r"above the estimate, about ([\d.]+ GiB), more than the ([\d.]+ GiB) usable"),
    "zh": re.compile(r"实测最多比估算高 \d+%，即约 ([\d.]+ GiB)，超过可用的 ([\d.]+ GiB)"),
}


def contradictions(text: str, lang: str) -> list[Problem]:
    """What one rendered answer says against itself: a card "runs" or "fits" with 0%
    headroom; a measured high end said to exceed the usable memory while the two figures
    shown are the same."""
    out: list[Problem] = []
    for m in _ZERO_RUNS[lang].finditer(text):
        out.append(("zero_headroom_runs", m.group(0)[:80]))
    for m in _BAND_OVER[lang].finditer(text):
        if m.group(1) == m.group(2):
            out.append(("band_over_equal", m.group(0)))
    return out


# --- the English text -----------------------------------------------------------------------

_HEAD = re.compile(r"^(\d+)× (.+?) \(.*?\): VRAM per card ~([\d.]+ GiB) of ([\d.]+ GiB) usable")
_RANGE = re.compile(r"^range ([\d.]+) GiB–([\d.]+) GiB, confidence")
_FITS = re.compile(r"^✅ Fits \((\d+)% headroom")
_TIGHT = re.compile(r"^⚠️ Runs, tight \((\d+)% headroom")
_NOFIT = re.compile(r"^❌ Does not fit \(([\d.]+ GiB) needed per card, ([\d.]+ GiB) usable\)")
_PICK = re.compile(r"^• (\d+)× (.+?) — (?:[¥$]([\d,.]+)/h)?(?:.*?; ~[¥$]([\d,.]+)/h at )?")
_PICK_FIGURE = re.compile(r"^  ([\d.]+ GiB) per card of ([\d.]+ GiB)")
# "$0.96/h (all 8 cards, $0.12/h each; …)": the total and one card's rate agree.
_EACH = re.compile(r"— [¥$]([\d,.]+)/h \((?:both|all (\d+)) cards, [¥$]([\d,.]+)/h each; ")
_JOB = re.compile(r"; ~([\d,.]+) h(?: \(~\d+ days\))?, whole job ~[¥$]([\d,.]+)")


def _num(shown: str) -> tuple[float, float]:
    """A figure as shown ("20.8", "32,544") and half a unit of its last digit: money is
    shown to three significant digits or whole units (advisor/units.py figure), so a product of
    shown figures is checked within what their rounding allows."""
    value = float(shown.replace(",", ""))
    return value, 0.5 * 10 ** -len(shown.partition(".")[2])


_ASSUMED = re.compile(r"^Assumed: (.*) — tell me if not\.$")


def gib_value(text: str) -> float:
    return float(text.split()[0])


def check_english(rec: Recommendation, text: str) -> list[Problem]:
    """The rendered English answer: headline, band, verdict, each pick and its lines."""
    out: list[Problem] = []
    lines = text.splitlines()
    head = None
    for i, line in enumerate(lines):
        if m := _HEAD.match(line):
            head = m
            h = rec.headline
            if h is not None and m.group(3) != gib(h.per_gpu_bytes):
                out.append(("headline_figure", f"shown {m.group(3)} vs {gib(h.per_gpu_bytes)}"))
            verdict = lines[i + 1] if i + 1 < len(lines) else ""
            if verdict[:1] in "❌⛔" and re.search(r"tok/s|; ~[\d.,]+ h\b", line):
                out.append(("fits_verdict", f"a speed or time beside {verdict[:30]}"))
        elif head is not None and (_RANGE.match(line) or line[:1] in "✅⚠❌"):
            out += _beside_head(head, line)
        elif m := _PICK.match(line):
            out += _pick_lines(m, lines[i + 1 : i + 8], head)
    for line in lines:  # a ⛔ line naming a card that is a pick (at the pick's count)
        if line.startswith("⛔"):
            out += _warned_picks(rec, line)
    out += _assumed_in_text(rec, lines)
    out += [("fits_verdict", d) for d in figures_disagree(text)]
    out += headroom_said(text, "en")
    return out


# The headline verdict's share and the "Watch out" line's, in each language.
_SAID = {
    "en": (
        re.compile(r"^⚠️ Runs, tight \((\d+)% headroom", re.M),
        re.compile(r"^⚠️ Runs, tight: only (\d+)% headroom, below the guide's 20%", re.M),
    ),
    "zh": (
        re.compile(r"^⚠️ 能跑，但偏紧（余量 (\d+)%", re.M),
        re.compile(r"^⚠️ 能跑，但偏紧：余量只有 (\d+)%，低于指南建议的 20%", re.M),
    ),
}


def headroom_said(text: str, lang: str) -> list[Problem]:
    """One answer states one headroom for its headline setup ("19% headroom" above, "only
    20% headroom, below the guide's 20%" below was the same 19.6%)."""
    verdict, warning = _SAID[lang]
    v, w = verdict.search(text), warning.search(text)
    out: list[Problem] = []
    if w and int(w.group(1)) >= 20:
        out.append(("headroom_said", f"{lang}: {w.group(0)}"))
    if v and w and v.group(1) != w.group(1):
        out.append(("headroom_said", f"{lang}: verdict {v.group(1)}% vs warning {w.group(1)}%"))
    return out


def _beside_head(head: re.Match, line: str) -> list[Problem]:
    """The band and the verdict under the headline agree with its figure."""
    need, usable = gib_value(head.group(3)), gib_value(head.group(4))
    if m := _RANGE.match(line):
        if not float(m.group(1)) <= need <= float(m.group(2)):
            return [("band", f"range {m.group(1)}–{m.group(2)} vs {head.group(3)}")]
        return []
    out: list[Problem] = []
    if m := _FITS.match(line) or _TIGHT.match(line):
        comfortable = line.startswith("✅")
        if need > usable or (comfortable and need > usable * (1 - HEADROOM) + 0.1):
            out.append(("fits_verdict", f"{line[:40]} beside {need} of {usable}"))
        if abs(int(m.group(1)) - (1 - need / usable) * 100) > 1.5:
            out.append(("fits_verdict", f"{m.group(1)}% beside {need} of {usable}"))
    elif (m := _NOFIT.match(line)) and (
        gib_value(m.group(1)) <= usable or m.group(1) != head.group(3)
    ):
        out.append(("fits_verdict", f"{line[:60]} beside {need} of {usable}"))
    return out


def _pick_lines(m: re.Match, after: list[str], head: re.Match | None) -> list[Problem]:
    """One pick: its figure fits its card, matches the headline for the same setup, no ⛔
    under it, and its whole-job cost is its rate × the hours shown."""
    out: list[Problem] = []
    count, name = m.group(1), m.group(2)
    block = after[: next((k for k, b in enumerate(after) if not b.startswith("  ")), len(after))]
    figure = _PICK_FIGURE.match(block[0]) if block else None
    if figure and gib_value(figure.group(1)) > gib_value(figure.group(2)):
        out.append(("fits_verdict", f"pick {name}: {figure.group(0)}"))
    same = head is not None and (count, name) == head.group(1, 2)
    if same and figure and figure.group(1) != head.group(3):
        out.append(("headline_figure", f"{name}: {figure.group(1)} vs the headline"))
    shown_rate = m.group(4) or m.group(3)  # converted: the answer's own currency
    if each := _EACH.search(m.string):
        (total, st), n, (one, so) = (
            _num(each.group(1)),
            int(each.group(2) or 2),
            _num(each.group(3)),
        )
        if n != int(count) or abs(one * n - total) > so * n + st + 0.01:
            out.append(("cost", f"{name}: {count}× at {one}/h each vs {total}/h in all"))
    elif int(count) > 1 and m.group(3):
        out.append(("cost", f"{name}: {count} cards priced without saying it is all of them"))
    out += _pick_policy(name, figure, block)
    for b in block:
        if b.strip().startswith("⛔"):
            out.append(("pick_vs_warning", f"pick {name}: {b.strip()[:80]}"))
        if (j := _JOB.search(b)) and shown_rate:
            out += _job_cost(name, shown_rate, j.group(1), j.group(2))
    return out


# "⚠️ Fits by the estimate (N% headroom), but may not fit: measured setups like this ran
# up to N% above the estimate, about X": a fit by the estimate with the band's high end over the card, said beside it.
_PICK_FITS = re.compile(r"^  (?:✅ Fits|⚠️ Fits by the estimate) \((\d+)% headroom\)")
_PICK_FITS_WITH = re.compile(r"^  ✅ Fits with .+ → ([\d.]+ GiB) per card \((\d+)% headroom; as is")


def _pick_policy(name: str, figure: re.Match | None, block: list[str]) -> list[Problem]:
    """A recommended pick keeps the guide's 20% as it stands ("✅ Fits (N% headroom)", N ≥ 20)
    or names, in its own lines, the change that brings it there ("✅ Fits with <change> →
    X GiB per card (N% headroom …", N ≥ 20). Under the "keep at least 20% free" heading,
    "⚠️ Tight as is (3% headroom)" was a recommendation that broke the rule it stood under."""
    if figure is None:
        return []
    need, usable = gib_value(figure.group(1)), gib_value(figure.group(2))
    fits = next((m for b in block if (m := _PICK_FITS.match(b))), None)
    fixed = next((m for b in block if (m := _PICK_FITS_WITH.match(b))), None)
    if any(b.startswith("  ⚠️ Runs, tight") for b in block):
        return [("headroom_policy", f"pick {name} recommended while tight")]
    if fixed is not None:
        after = gib_value(fixed.group(1))
        if int(fixed.group(2)) < 20 or after > usable * (1 - HEADROOM) + 0.05:
            return [("headroom_policy", f"pick {name}: its change leaves {fixed.group(0)[:90]}")]
        return []
    if fits is None:
        return [("headroom_policy", f"pick {name}: no verdict in its lines")]
    if int(fits.group(1)) < 20 or need > usable * (1 - HEADROOM) + 0.05:
        return [("headroom_policy", f"pick {name}: {need} of {usable} recommended as it stands")]
    return []


def headline_vs_fix(rec: Recommendation, text: str, lang: str) -> list[Problem]:
    """Never "does not fit" above a change that makes it fit: when the headline setup has a
    change that fits (the verdict's fix), the headline says "fits with <change>"."""
    v = rec.verdict
    if v is None or v.state not in ("no_fit", "split"):
        return []
    no = ("❌ Does not", "❌ 装不下", "❌ 这个卡数")
    said_no = [line for line in text.splitlines() if line.startswith(no)]
    fits_with = {"en": ("Fits with", "Runs, tight, with"), "zh": ("就装得下", "能跑但偏紧")}[lang]
    if v.fix and said_no:
        return [("headline_vs_fix", f"{lang}: {said_no[0][:60]} above the change {v.fix}")]
    if v.fix and not any(w in text for w in fits_with):
        return [("headline_vs_fix", f"{lang}: the change {v.fix} is not said to make it fit")]
    return []


def _job_cost(name: str, shown_rate: str, shown_hours: str, shown_cost: str) -> list[Problem]:
    (rate, sr), (hours, slack), (cost, sc) = _num(shown_rate), _num(shown_hours), _num(shown_cost)
    if hours == 0 and cost >= 0.01:
        return [("cost", f"{name}: 0 h shown beside a cost of {cost}")]
    low, high = (rate - sr) * (hours - slack) - sc, (rate + sr) * (hours + slack) + sc
    if not low - 0.01 <= cost <= high + 0.01:
        return [("cost", f"{name}: {rate}/h × {hours} h ≠ {cost}")]
    return []


def _warned_picks(rec: Recommendation, line: str) -> list[Problem]:
    named = _cards_named(line)
    out: list[Problem] = []
    for o in picks(rec):
        counted = re.search(rf"(\d+)× {re.escape(o.gpu_name)}", line)
        if o.gpu_name in named and (counted is None or int(counted.group(1)) == o.count):
            out.append(("pick_vs_warning", f"⛔ names pick {o.gpu_name}: {line[:80]}"))
    return out


def _cards_named(line: str) -> set[str]:
    """Catalog card names in a line, without one that is part of a longer one named there
    ("GeForce RTX 4090" inside "GeForce RTX 4090 Laptop GPU")."""
    found = {g.name for g in catalog.gpus().values() if g.name in line}
    return {n for n in found if not any(n != m and n in m for m in found)}


_CTX = re.compile(r"(?:context|sequences) (\d+k|\d+)\b")


def _assumed_in_text(rec: Recommendation, lines: list[str]) -> list[Problem]:
    """The context the header and "Assumed:" state is the one the figure used."""
    s = rec.setup or rec.result
    if s.estimate is None or rec.recipe:
        return []
    w = s.workload
    used = w.seq_len if w.mode.is_training else w.context_tokens
    assumed = {a.field: a.value for a in s.assumed}
    used = used or assumed.get("seq_len" if w.mode.is_training else "context_tokens")
    out: list[Problem] = []
    header = lines[0] if lines else ""
    if any(" video frames" in line for line in lines) and any("images/min" in x for x in lines):
        out.append(("assumptions", "an image rate beside the video frames it ignores"))
    if w.mode.is_training and any("context cut to" in line for line in lines):
        out.append(("assumptions", "a training run's fix names its sequences 'context'"))
    if used and (m := _CTX.search(header)):
        n = int(m.group(1)[:-1]) * 1024 if m.group(1).endswith("k") else int(m.group(1))
        if n != int(used):
            out.append(("assumptions", f"header context {m.group(1)} vs used {used}"))
    batch = w.batch_size or assumed.get("batch_size")
    if batch and (m := re.search(r" · batch (\d+)", header)) and int(m.group(1)) != int(batch):
        out.append(("assumptions", f"header batch {m.group(1)} vs used {batch}"))
    fmt = w.weights_format or assumed.get("weights_format")
    parts = header.split(" · ")
    if (
        fmt
        and len(parts) > 2
        and re.fullmatch(r"[\w.-]+", parts[2])
        and not re.match(r"(?:context|sequences|batch) ", parts[2])
    ):
        shown = parts[2]
        if shown != fmt and not (shown == "fp16" and fmt == "bf16"):
            out.append(("assumptions", f"header format {shown} vs used {fmt}"))
    runtime = (w.runtime.value if w.runtime else None) or assumed.get("runtime")
    h = rec.headline
    card = catalog.gpus().get(h.gpu_id) if h is not None else None
    no_bf16 = card is not None and card.vendor == "NVIDIA" and not card.bf16_supported
    for line in lines:
        # a change offered for a transformers run is one transformers has (its generate()
        # has no fp8 KV cache; "vLLM --kv-cache-dtype fp8" was offered as the fix)
        fix_line = "Fits with" in line or "Runs, tight" in line
        if runtime == "transformers" and fix_line and "vLLM --kv-cache-dtype" in line:
            out.append(("assumptions", f"a vLLM flag offered to a transformers run: {line[:60]}"))
        if no_bf16 and _ASSUMED.match(line) and re.search(r"\bin bf16\b", line):
            out.append(("assumptions", f"an assumed bf16 on {card.name}, which has none"))
        if m := _ASSUMED.match(line):
            said = m.group(1)
            word = label("en", f"value.{runtime}") if runtime else ""
            if runtime and "runtime: " in said and f"runtime: {word}" not in said:
                r = re.search(r"runtime: ([^;]+)", said)
                out.append(("assumptions", f"runtime {r.group(1) if r else '?'} vs {runtime}"))
    return out
