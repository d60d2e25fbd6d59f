"""Answer invariants across the views of one answer: the first reply's length and language,
the nvidia-smi figure in the answer and its details, the weights arithmetic, the inline
article and the lab machines' answer; and every view rendered for a question."""

from __future__ import annotations

import re

from advisor import catalog
from advisor.recommend import Recommendation
from advisor.recommend.owned import OwnedAnswer
from advisor.render import gib, render
from checks.answer_facts import Problem, hardware_conflicts, near_enough, pick_state
from checks.answer_text import gib_value, headline_vs_fix

SHORT_LIMIT = 900  # visible characters of a first reply (docs/answers.md)


def check_short(rec: Recommendation, text: str, lang: str) -> list[Problem]:
    """The first reply: at most SHORT_LIMIT visible characters, in the reader's language, and
    its verdict kept to the headroom policy (`headline_vs_fix`)."""
    from bot.replies import visible_len

    out = headline_vs_fix(rec, text, lang)
    if (n := visible_len(text)) > SHORT_LIMIT:
        out.append(("short_reply", f"{lang}: {n} visible characters"))
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    if lang == "zh" and cjk < 4:
        out.append(("short_reply", "a Chinese first reply with no Chinese in it"))
    if lang == "en" and re.search(r"[\u4e00-\u9fff]{4}", re.sub(r"<b>.*?</b>|\(.*?\)", "", text)):
        out.append(("short_reply", "an English first reply in Chinese"))
    return out


_SMI_ANSWER = re.compile(r"nvidia-smi view ([\d.]+ GiB)")
_SMI_DETAILS = re.compile(
    r"Total (?:per card |\(nvidia-smi view\) )([\d.]+ GiB)(?:; nvidia-smi shows ([\d.]+ GiB))?"
)


def check_views(rec: Recommendation, answer: str, details: str) -> list[Problem]:
    """The answer and its details give one per-card figure and one nvidia-smi figure; the
    nvidia-smi view is never under the figure, and a larger one is explained."""
    a, d = _SMI_ANSWER.search(answer), _SMI_DETAILS.search(details)
    h = rec.headline
    if a is None or d is None:
        return []
    out: list[Problem] = []
    smi = d.group(2) or d.group(1)
    if a.group(1) != smi:
        out.append(("headline_figure", f"nvidia-smi {a.group(1)} in the answer, {smi} in details"))
    if h is not None and d.group(1) != gib(h.per_gpu_bytes):
        out.append(("headline_figure", f"details total {d.group(1)} vs {gib(h.per_gpu_bytes)}"))
    if gib_value(smi) < gib_value(d.group(1)):
        out.append(("headline_figure", f"nvidia-smi {smi} under the figure {d.group(1)}"))
    if d.group(2) and "pre-allocates" not in answer:
        out.append(("assumptions", "an engine's nvidia-smi share shown without saying why"))
    return out


WEIGHTS_LINE = re.compile(
    r"^([\d.]+)B params (?:on the card \(.*?\) )?× ([\d.]+) bits \(([^)]+)\)"
    r"(?: \+ ([\d.]+)B kept in 16-bit \(.*?\))?(?: / (\d+) card\(s\))? = ([\d.]+) GiB$",
    re.M,
)


def weights_arithmetic(details: str) -> list[Problem]:
    """The details' weights line is arithmetic that holds: params × bits / 8 / cards is the
    GiB it shows ("14.77B params × 8.5 bits (q8_0) = 13.84 GiB" did not: llama.cpp keeps
    the token embedding in host RAM, and the line did not count it out)."""
    out: list[Problem] = []
    for m in WEIGHTS_LINE.finditer(details):
        params, bits, kept = float(m[1]), float(m[2]), float(m[4] or 0)
        cards, shown = int(m[5] or 1), float(m[6])
        computed = (params * bits / 8 + kept * 2) * 1e9 / cards / 2**30
        if abs(computed - shown) > 0.02 * shown + 0.02:
            out.append(("headline_figure", f"{m[0]!r} computes {computed:.2f} GiB"))
    return out


def check_inline(rec: Recommendation, text: str) -> list[Problem]:
    """The inline article's figure and verdict are the full answer's."""
    out: list[Problem] = []
    h = rec.headline
    # its header names the length as the answer's does: a training run's "sequences 2k"
    # read "context 2k" here
    head = text.split("\n", 1)[0]
    training = (rec.setup or rec.result).workload.mode.is_training
    if re.search(r" · context \d" if training else r" · sequences \d", head):
        out.append(("assumptions", f"inline header {head!r} for a training={training} run"))
    m = re.search(r"VRAM per card ~([\d.]+ GiB) on (\d+)× ", text)
    if h is not None and m and m.group(1) != gib(h.per_gpu_bytes):
        out.append(("headline_figure", f"inline {m.group(1)} vs {gib(h.per_gpu_bytes)}"))
    if rec.verdict is not None and h is not None:
        marks = {
            "fits": "✅ Fits (",
            "fits_with": "✅ Fits with ",
            "tight": "⚠️ Runs, tight (",
            "tight_with": "⚠️ Runs, tight, with ",
            "no_fit": "❌ Does not fit",
            "blocked": "⛔",
            "split": "❌ Does not split",
        }
        if rec.verdict.measured_up_to_bytes and rec.verdict.state == "fits":
            marks["fits"] = "⚠️ Fits by the estimate ("
        if rec.verdict.lazy_context_bytes:
            marks["tight"] = "⚠️ Tight: fits only with a recent PyTorch ("
        if marks[rec.verdict.word] not in text:
            out.append(("fits_verdict", f"inline lacks the {rec.verdict.word} verdict"))
    pick = rec.cheapest
    if pick is not None and re.search(rf"⛔.*{re.escape(pick.gpu_name)}", text):
        out.append(("pick_vs_warning", f"inline top pick {pick.gpu_name} beside ⛔"))
    # a pick over the asked budget, or figures for a changed job, say so here as in the answer
    if pick is not None and rec.over_budget and "fits a budget of" not in text:
        out.append(("budget", "inline top pick over the budget, unsaid"))
    if rec.budget_fix and "as asked within your budget" not in text:
        out.append(("assumptions", f"inline figures for {rec.budget_fix}, unsaid"))
    if rec.recipe and rec.asked and rec.asked.estimate and "🔧" not in text:
        out.append(("assumptions", f"inline figures for the recipe {rec.recipe}, unsaid"))
    return out


def check_owned(rec: Recommendation, own: OwnedAnswer, text: str) -> list[Problem]:
    """A lab's machines: the one to use runs the job; every state agrees with its figure."""
    out: list[Problem] = []
    for f in own.machines:
        o, v = f.option, f.verdict
        gpu = catalog.gpus()[f.machine.gpu_id]
        if v.state not in ("blocked", "split") and v.state != pick_state(o, v):
            out.append(("fits_verdict", f"lab {f.machine.name}: {v.state} vs {pick_state(o, v)}"))
        if f.cards > f.machine.count:
            out.append(("count_priced", f"lab {f.machine.name}: {f.cards} of {f.machine.count}"))
        rate = f.machine.price_per_card_hour
        if (
            f.cost_per_hour is not None
            and rate is not None
            and not near_enough(f.cost_per_hour, rate * f.cards)
        ):
            out.append(("count_priced", f"lab {f.machine.name}: cost {f.cost_per_hour}"))
        if f is own.best:
            if v.state not in ("fits", "tight") or o.blocked:
                out.append(("pick_vs_warning", f"lab best {f.machine.name} is {v.state}"))
            for fact in hardware_conflicts(rec, gpu):
                out.append(("pick_vs_warning", f"lab best {f.machine.name}: {fact}"))
    m = re.search(r"Use (.+?) \((\d+)× .+?\): (✅ Fits|⚠️ Runs, tight) on (\d+) of its", text)
    if own.best is not None and m is None:
        out.append(("pick_vs_warning", "lab text names no machine to use"))
    if m and own.best is not None and int(m.group(4)) != own.best.cards:
        out.append(("count_priced", f"lab text {m.group(4)} cards vs {own.best.cards}"))
    return out


def rendered(rec: Recommendation, parsed, q: str) -> dict[str, str]:  # noqa: ANN001
    """Every view of one answer, in both languages (the first reply as `<lang>/short`)."""
    out = {}
    for lang in ("en", "zh"):
        for template in ("answer", "details", "inline"):
            out[f"{lang}/{template}"] = render(
                template, lang, rec=rec, parsed=parsed, canonical=q, plain=True
            )
        out[f"{lang}/short"] = render(
            "answer", lang, rec=rec, parsed=parsed, canonical=q, plain=True, view="short"
        )
    return out
