"""The shapes the search and the pitfalls share: a price, one candidate setup (card x count)
and a pitfall. Below both `advisor.recommend` and `advisor.pitfalls`, so neither imports the
other for its types.

`Price` and `Option` are the search's rows: a new question builds ~40 options and its ranking
reads their fields ~700 times. They are slotted dataclasses, which pydantic validates and
dumps inside `Recommendation` as it does a model (the same JSON), built from values of the
right types by the engine alone."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from advisor.catalog import DATA_DIR


@dataclass(slots=True)
class Price:
    amount: float
    currency: str
    platform: str
    source_date: str | None
    # Set when the listing was in another currency: what the platform actually charges.
    listed_amount: float | None = None
    listed_currency: str | None = None
    cny_per_usd: float | None = None  # the rate used, shown with a conversion
    in_region: bool = True  # payable where the reply's reader pays (China for zh)

    @property
    def converted(self) -> bool:
        return self.listed_currency is not None


@dataclass(slots=True, kw_only=True)  # keywords only: a swapped positional argument would pass
class Option:
    gpu_id: str
    gpu_name: str
    count: int
    fits: bool
    risky: bool  # fits, but with less than 20% headroom
    multi_node: bool
    per_gpu_bytes: int
    usable_bytes: int
    headroom_fraction: float
    price_per_hour: Price | None  # for all `count` cards
    parallelism: str | None = None  # how the work is split over `count` cards
    blocked: list[str] = field(default_factory=list)  # requirement codes the card misses
    fix: str | None = None  # a cheap change that makes it fit with headroom (fixes.py)
    fixed_bytes: int | None = None  # per-card figure after `fix`
    notes: list[Pitfall] = field(default_factory=list)  # pitfalls shown beside this pick
    decode_tokens_per_s: float | None = None  # one request
    decode_total_tokens_per_s: float | None = None  # all `concurrency` requests together
    concurrency: int = 1
    prefill_s: float | None = None
    train_hours: float | None = None
    job_cost: float | None = None
    images_per_min: float | None = None
    # speech recognition (advisor/audio_speed.py): seconds of audio per second on these
    # cards, and whether it is a floor (a card faster than the one measured)
    audio_realtime_x: float | None = None
    audio_at_least: bool = False
    # video generation (advisor/video_speed.py): seconds for the clips asked on one card, and
    # the measured row it was moved from (its card's name, its seconds)
    video_seconds: float | None = None
    video_from: tuple[str, float] | None = None
    why: str = ""
    # Fits by the estimate, but the band's high end (how far measured setups like this ran
    # above it) is over the usable memory: that figure, said beside the fit; else None.
    measured_up_to_bytes: int | None = None


class Pitfall(BaseModel):
    code: str
    severity: str  # error | warning | info
    params: dict[str, str] = {}
    # Parameters whose text differs by language (a catalog note): name -> {"zh": .., "en": ..}
    lang_params: dict[str, dict[str, str]] = {}

    def message(self, lang: str = "en") -> str:
        lang = "zh" if lang == "zh" else "en"
        text = pitfall_texts()[self.code][lang]
        return text.format(**self.params, **{k: v[lang] for k, v in self.lang_params.items()})


@cache
def pitfall_texts() -> dict[str, dict[str, Any]]:
    """Each pitfall's severity and wording in both languages (data/pitfalls.toml)."""
    with (DATA_DIR / "pitfalls.toml").open("rb") as fh:
        return tomllib.load(fh)
