"""The memory breakdown as a picture (the 📊 button under an answer): one stacked bar per
option (advisor.recommend.bars) in the terms' colours and words of the text
(templates/colours.toml, labels.toml), against each card's usable memory, with the line
that keeps the guide's 20% free and the band the figure may fall in. matplotlib's Agg
backend, no display; the caller runs `draw` off the event loop (it takes ~50-150 ms).

Chinese labels need a CJK font (the container installs fonts-wqy-microhei, docs/answers.md);
without one the picture is drawn with English labels rather than boxes, and says so in the
log once."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from advisor.recommend import Recommendation
from advisor.recommend.bars import Bar, option_bars
from advisor.render import label, term_colours

if TYPE_CHECKING:
    from matplotlib.axes import Axes

log = logging.getLogger(__name__)

# Font families with Chinese glyphs, in order of preference (Debian: fonts-wqy-microhei,
# fonts-noto-cjk; macOS / Windows names for a developer's machine).
CJK_FAMILIES = (
    "WenQuanYi Micro Hei",
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Source Han Sans SC",
    "PingFang SC",
    "Microsoft YaHei",
    "SimHei",
)
HEADROOM = 0.20  # the guide's "VRAM misestimate" rule, drawn as a line at 80% of usable
GIB = 2**30
HATCHES = ("", "//", "..", "xx")


@dataclass
class Chart:
    png: bytes
    lang: str  # the language its labels are in (en when zh had no font)
    texts: list[str] = field(default_factory=list)  # every text drawn, in order
    width_px: int = 0
    height_px: int = 0


@cache
def cjk_font() -> str | None:
    """The first CJK family matplotlib can find, or None."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    found = next((f for f in CJK_FAMILIES if f in names), None)
    if found is None:
        log.warning("no CJK font found (%s): Chinese charts use English labels", CJK_FAMILIES[0])
    return found


def _bar_label(b: Bar, lang: str) -> str:
    name = b.gpu_name.replace("GeForce ", "").replace("NVIDIA ", "")
    name = name.split(" (")[0]  # "Tesla V100 (PCIe/SXM2, …)": the name alone fits the axis
    mark = label(lang, "chart.yours") if b.named else ""
    return f"{b.count}× {name}{mark}"


def _draw_bar(
    ax: Axes,
    y: int,
    b: Bar,
    lang: str,
    colours: dict[str, tuple[str, str]],
    families: list[str],
    seen: set[str],
    texts: list[str],
) -> None:
    """One option's bar at row `y`: its terms stacked in their colours (a term's word in
    the legend once: `seen`), the card's usable memory and the guide's 80% line, the band,
    and the figure beside it; every text drawn is added to `texts`."""
    left = 0.0
    hues: dict[str, int] = {}  # terms of one colour in a bar: told apart by hatching
    for name, n in b.terms or [("", b.total_bytes)]:
        colour = colours.get(name, colours[""])[1]
        hatch = HATCHES[hues.get(colour, 0) % len(HATCHES)]
        hues[colour] = hues.get(colour, 0) + 1
        word = label(lang, f"term.{name}") if name else label(lang, "chart.total")
        first = word not in seen
        seen.add(word)
        if first:
            texts.append(word)
        ax.barh(
            y,
            n / GIB,
            left=left,
            height=0.55,
            color=colour,
            hatch=hatch,
            edgecolor="white",
            linewidth=0.5,
            label=word if first else None,
        )
        left += n / GIB
    usable = b.usable_bytes / GIB
    ax.plot([usable, usable], [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.plot([usable * (1 - HEADROOM)] * 2, [y - 0.4, y + 0.4], "k--", linewidth=1)
    ax.plot([b.low_bytes / GIB, b.high_bytes / GIB], [y + 0.36] * 2, color="#555", lw=1.5)
    ax.plot([b.low_bytes / GIB, b.high_bytes / GIB], [y + 0.36] * 2, "|", color="#555")
    figure = f"{b.total_bytes / GIB:.1f} / {usable:.1f} GiB"
    texts.append(figure)
    ax.text(
        max(left, usable, b.high_bytes / GIB) * 1.02,
        y,
        figure,
        va="center",
        fontsize=8,
        family=families,
    )


def draw(rec: Recommendation, lang: str) -> Chart | None:
    """The picture of `rec`'s breakdown in `lang`, or None when the answer has no per-card
    figure (a task without a memory formula)."""
    bars = option_bars(rec)
    if not bars:
        return None
    from matplotlib.figure import Figure  # imported here: the bot starts without it loaded

    font = cjk_font() if lang == "zh" else None
    if lang == "zh" and font is None:
        lang = "en"  # boxes instead of characters help nobody
    texts: list[str] = []

    def say(key: str, **fmt: object) -> str:
        text = label(lang, key, **fmt)
        texts.append(text)
        return text

    colours = term_colours()
    height_in = 2.2 + 0.75 * len(bars)
    # one layout pass (constrained) and one draw: savefig's bbox_inches="tight" drew twice
    fig = Figure(figsize=(8.0, height_in), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    families = [font, "DejaVu Sans"] if font else ["DejaVu Sans"]
    names = [_bar_label(b, lang) for b in bars]
    texts.extend(names)
    seen: set[str] = set()
    for y, b in enumerate(bars):
        _draw_bar(ax, y, b, lang, colours, families, seen, texts)
    # the legend's marks for the lines, once
    ax.plot([], [], color="black", linewidth=2, label=say("chart.usable"))
    ax.plot([], [], "k--", linewidth=1, label=say("chart.headroom_line"))
    ax.plot([], [], color="#555", linewidth=1.5, label=say("chart.band"))
    ax.set_yticks(range(len(bars)), names, family=families, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel(say("chart.axis"), family=families)
    right = max(max(b.usable_bytes, b.high_bytes, b.total_bytes) for b in bars) / GIB
    ax.set_xlim(0, right * 1.25)
    model = rec.result.model.name
    title = say("chart.title", model=model)
    ax.set_title(title, family=families, fontsize=11)
    fig.legend(
        loc="outside lower center",
        ncol=3,
        frameon=False,
        prop={"family": families, "size": 8},
    )
    ax.grid(axis="x", alpha=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    png = buf.getvalue()
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return Chart(png, lang, texts, width, height)
