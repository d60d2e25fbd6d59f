"""Jinja rendering of replies: `templates/<lang>/<name>.j2`, autoescaped for Telegram HTML.

The one place bytes become the unit users see (`gib` filter). `plain=True` strips the
HTML tags for the terminal.
"""

from __future__ import annotations

import html
import re
import tomllib
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
LANGS = ("zh", "en")


def gib(value: float | int | None) -> str:
    if value is None:
        return "?"
    v = value / 2**30
    return f"{v:.1f} GiB" if v < 100 else f"{v:.0f} GiB"


def bar(part: float, whole: float, width: int = 10) -> str:
    """A text bar for part of a whole (a term of the VRAM total)."""
    n = max(0, min(width, round(part / whole * width))) if whole else 0
    return "█" * n + "░" * (width - n)


def pct(fraction: float) -> str:
    return f"{fraction * 100:.0f}%"


def money(price) -> str:  # noqa: ANN001
    if price is None:
        return "—"
    sym = "¥" if price.currency == "CNY" else "$"
    return f"{sym}{price.amount:.2f}/h"


@cache
def labels(lang: str) -> dict[str, dict[str, str]]:
    """Short wording (buttons, alerts, term names) from `templates/<lang>/labels.toml`."""
    with (TEMPLATES / (lang if lang in LANGS else "en") / "labels.toml").open("rb") as fh:
        return tomllib.load(fh)


def label(lang: str, key: str, **fmt: object) -> str:
    """`label("zh", "button.skip")`; an unknown key shows as itself rather than failing a reply."""
    section, _, name = key.partition(".")
    text = labels(lang).get(section, {}).get(name, key)
    return text.format(**fmt) if fmt else text


@cache
def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
        auto_reload=False,  # templates ship with the code; no stat() per reply
    )
    env.filters.update(gib=gib, bar=bar, pct=pct, money=money)
    return env


def render(template: str, lang: str, /, plain: bool = False, **ctx: object) -> str:
    lang = lang if lang in LANGS else "en"

    def t(key: str, **fmt: object) -> str:
        return label(lang, key, **fmt)

    text = _env().get_template(f"{lang}/{template}.j2").render(lang=lang, t=t, **ctx).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    if plain:
        text = html.unescape(re.sub(r"<[^<>]+>", "", text))
    return text
