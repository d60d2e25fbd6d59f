"""What a member saw after running a job the bot answered: "21.3G", "21800 MiB", "OOM",
"实测 21.5G", "measured 18 GiB with nvidia-smi", "OOM on 2x 3090".

Recognizers in a declared order, each consuming its span of the line (advisor.parse.scan):
where the figure was read, an out-of-memory word, the figure with its unit, the card and
count (the query parser's own card recognizer, cards.py), the report words, filler. What is
left says whether a typed message is a report at all (`MeasuredReport.is_typed_report`).
Words and units are data: advisor/data/vocab/measured.toml.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from pydantic import BaseModel

from advisor.parse import cards, vocab
from advisor.parse.scan import Reading, Rejected, Scan, normalize

Where = Literal["nvml", "allocated", "reserved", "unknown"]
MAX_CHARS = 300  # a report is a line; a pasted log is not read as one
# The bound: no card, nor any sum of a few, holds more than 2 TB.
MAX_BYTES = 2 * 2**40
WHERE_ORDER: tuple[Where, ...] = ("nvml", "allocated", "reserved")


class MeasuredReport(BaseModel):
    """A report as read. `error` (a code with `detail`) when it cannot be stored:
    empty | too_long | no_figure | no_unit | bad_unit | negative | zero | absurd | bad_card."""

    oom: bool = False
    value_bytes: int | None = None  # the peak per card, as the member read it
    unit_ambiguous: bool = False  # "G"/"GB"/"MB": read as binary, may have been decimal
    where: Where = "unknown"
    gpu_id: str | None = None  # a card named in the report (else the answer's)
    gpu_count: int | None = None
    cue: bool = False  # a report word ("实测", "measured"), an out-of-memory or a "where" word
    figure_seen: bool = False  # a number was written, with a unit or not
    leftover: str = ""  # words read as none of the above
    error: str | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def is_typed_report(self) -> bool:
        """A message typed after an answer (no prompt asked for it) is a report when it
        says so (a report or out-of-memory word), names a figure or OOM, and holds nothing
        else: "实测 21.5G" is, "qwen 7b lora oom on 4090, what now?" is a question."""
        return self.cue and (self.oom or self.figure_seen) and not self.leftover


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    words = vocab.load("measured")
    units = sorted(
        ((w, u) for u in words["units"].values() for w in u["words"]),
        key=lambda p: len(p[0]),
        reverse=True,
    )
    unit_alt = "|".join(re.escape(w) for w, _ in units)
    number = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
    return {
        # a sign only where it is not a hyphen inside a name ("a100-40g")
        "figure": re.compile(
            rf"(?:(?<![\w.\-])(?P<neg>[-−])\s*|(?<![\w.\-]))(?P<num>{number})"
            rf"\s*(?P<unit>{unit_alt})(?![a-z0-9])",
            re.I,
        ),
        "number": re.compile(rf"(?<![\w.\-])[-−]?\s*(?:{number})\s*(?P<word>[^\s\d.,]+)?", re.I),
        "oom": re.compile(vocab.alternation(words["oom"]["words"]), re.I),
        "cue": re.compile(vocab.alternation(words["cue"]["words"]), re.I),
        "filler": re.compile(vocab.alternation(words["filler"]["words"]), re.I),
        # every kind's words in one alternation, longest first ("torch reserved" over "torch")
        "where": re.compile(
            vocab.alternation([w for kind in WHERE_ORDER for w in words["where"][kind]]), re.I
        ),
        **{
            f"where_{kind}": re.compile(vocab.alternation(words["where"][kind]) + "$", re.I)
            for kind in WHERE_ORDER
        },
    }


@cache
def _units() -> dict[str, tuple[int, bool]]:
    return {
        w.lower(): (int(u["bytes"]), bool(u["ambiguous"]))
        for u in vocab.load("measured")["units"].values()
        for w in u["words"]
    }


def _where(s: Scan) -> Where:
    """The first "where read" word decides; every one is consumed."""
    found = s.take_all(_patterns()["where"])
    if not found:
        return "unknown"
    first = min(found, key=lambda m: m.start()).group(0)
    return next(k for k in WHERE_ORDER if _patterns()[f"where_{k}"].match(first))


def _figure(s: Scan, report: MeasuredReport) -> None:
    """The first number with a unit this parser reads; its sign and size are checked."""
    m = s.take(_patterns()["figure"])
    if m is None:
        return
    report.figure_seen = True
    per_unit, ambiguous = _units()[m.group("unit").lower()]
    value = float(m.group("num").replace(",", "")) * per_unit
    if m.group("neg"):
        report.error, report.detail = "negative", m.group(0).strip()
    elif value <= 0:
        report.error, report.detail = "zero", m.group(0).strip()
    elif value > MAX_BYTES:
        report.error, report.detail = "absurd", m.group(0).strip()
    else:
        report.value_bytes, report.unit_ambiguous = int(value), ambiguous


def _card(s: Scan, report: MeasuredReport) -> None:
    r = Reading()
    try:
        cards.recognize_cards(s, r)
    except Rejected as exc:
        report.error, report.detail = "bad_card", exc.error.detail or ""
        return
    report.gpu_id = r.gpu_id
    report.gpu_count = r.laptops or r.gpu_count


def _number_without_unit(s: Scan, report: MeasuredReport) -> None:
    """A number left once the figure and the card are read: its unit is missing or unread."""
    m = s.take(_patterns()["number"])
    if m is None:
        return
    report.figure_seen = True
    word = (m.group("word") or "").strip()
    report.error = "bad_unit" if word else "no_unit"
    report.detail = (word or m.group(0).strip())[:20]


def may_be_report(text: str) -> bool:
    """A quick look before `parse_report`: a typed report holds a report, out-of-memory or
    "where" word (most messages in a private chat are questions, and hold none)."""
    if not text or len(text) > MAX_CHARS:
        return False
    return _keywords().search(text.lower()) is not None


@cache
def _keywords() -> re.Pattern[str]:
    """The longest piece of each report, out-of-memory and "where" word, as plain text in
    one alternation without word edges: 1-4 us a message where the word patterns took
    18-55 us (timeit, five questions), on every message a private chat sends. A piece found inside another word
    ("ran" in "transformers") only costs the full parse."""
    words = vocab.load("measured")
    every = [*words["cue"]["words"], *words["oom"]["words"]]
    every += [w for kind in WHERE_ORDER for w in words["where"][kind]]
    pieces = sorted({max(w.lower().split(), key=len) for w in every}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, pieces)))


def parse_report(text: str) -> MeasuredReport:
    """Never raises: what cannot be stored comes back with `error`."""
    if not text or not text.strip():
        return MeasuredReport(error="empty")
    if len(text) > MAX_CHARS:
        return MeasuredReport(error="too_long", detail=str(MAX_CHARS))
    p = _patterns()
    s = Scan(normalize(text).lower())
    report = MeasuredReport()
    report.where = _where(s)
    report.oom = bool(s.take_all(p["oom"]))
    if report.oom:
        # the card first: "OOM on a100 80g" names the card's memory, not a peak
        _card(s, report)
        s.take_all(p["figure"])  # "OOM at 23.5G": the bound is the card's memory
    else:
        _figure(s, report)
        if report.error is None:
            _card(s, report)
    # "nvidia-smi 显示 23500MiB": saying where it was read says it is a reading
    report.cue = bool(s.take_all(p["cue"])) or report.oom or report.where != "unknown"
    s.take_all(p["filler"])
    if not report.oom and report.value_bytes is None and report.error is None:
        _number_without_unit(s, report)
    report.leftover = re.sub(r"[\W_]+", " ", s.text).strip()
    if report.error is None and report.value_bytes is None and not report.oom:
        report.error = "no_figure"
    return report
