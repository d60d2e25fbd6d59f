"""How a share is shown to users, in one place for the engine's pitfall lines and the
templates (advisor.render re-exports it as the `headroom` filter)."""

from __future__ import annotations

import math


def headroom(fraction: float) -> str:
    """A card's free share, rounded down: 19.6% free is "19%", never "20% headroom, the
    guide asks for 20%" beside a tight verdict, and the verdict line and the "Watch out"
    line of one answer show the same number."""
    return f"{math.floor(fraction * 100 + 1e-9):.0f}%"
