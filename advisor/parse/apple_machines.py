"""The Mac an Apple chip sits in ("m2 ultra 192gb mac studio", "m3 max macbook pro"): once
the chip is read as the card, the machine's name says nothing more, and was listed as not
understood when written after the chip (vocab/cards.toml [apple_machines])."""

from __future__ import annotations

from functools import cache

from advisor import catalog
from advisor.parse import vocab


@cache
def _names() -> tuple[frozenset[str], frozenset[str]]:
    words = vocab.load("cards")["apple_machines"]["words"]
    return frozenset(w for w in words if " " not in w), frozenset(w for w in words if " " in w)


def without_mac_names(ignored: list[str], gpu_id: str | None) -> list[str]:
    """The leftover words less a Mac's name ("mac studio", "macbook pro") where the card read
    is an Apple chip; every word kept elsewhere."""
    gpu = catalog.gpus().get(gpu_id) if gpu_id else None
    if gpu is None or gpu.vendor != "Apple":
        return ignored
    single, pairs = _names()
    out: list[str] = []
    i = 0
    while i < len(ignored):
        if f"{ignored[i]} {ignored[i + 1]}" in pairs if i + 1 < len(ignored) else False:
            i += 2
            continue
        if ignored[i] not in single:
            out.append(ignored[i])
        i += 1
    return out
