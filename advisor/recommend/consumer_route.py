"""A diffusion job too big for a 24 GB card, asked with no card named: what it runs as on
one (data/small_card_recipes.toml [consumer_route]), said beside the rented picks. Most lab
members own a 4090 or a 3090; the 80 GB picks are not their only way. Each route is the
engine's own estimate: the asked job with the small-card recipe that fits, a smaller format
at less offload, and where the model's authors publish them, a lower resolution and a
smaller sibling."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from advisor import catalog
from advisor.catalog import DATA_DIR, GpuSpec
from advisor.memory import GIB, estimate
from advisor.models.choices import Kind
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.headroom import HEADROOM, MIN_FREE
from advisor.recommend.recipes import faster_route_run, small_card_recipe
from advisor.types import Option, Pitfall, pitfall_texts


@cache
def _table() -> dict[str, Any]:
    with (DATA_DIR / "small_card_recipes.toml").open("rb") as fh:
        return tomllib.load(fh)["consumer_route"]


def consumer_card_route(base: EstimateResult, cheapest: Option | None) -> Pitfall | None:
    """The note, when no card is named, the job is a diffusion inference, and the cheapest
    pick is a card larger than the reference 24 GB one; None when nothing fits it."""
    w = base.workload
    if base.model.kind != Kind.diffusion or w.mode.is_training or base.estimate is None:
        return None
    gpu = catalog.gpus()[_table()["gpu"]]
    if cheapest is None or cheapest.usable_bytes <= gpu.usable_vram_bytes:
        return None
    if base.estimate.total_bytes <= gpu.usable_vram_bytes * (1 - HEADROOM):
        return None  # it runs on the 24 GB card as asked: the picks say enough
    parts: list[dict[str, str]] = []
    asked = _routes(base, gpu)
    if asked:
        parts.append(_phrase("as_asked", *asked[0]))
        parts += [_phrase("faster", *r) for r in asked[1:]]
    entry = next((m for m in _table().get("model", []) if m["model"] == base.model.id), None)
    if entry is not None:
        width, height = entry.get("low_res", (None, None))
        res = f"{width}×{height}"
        if width and (w.image_width or 0) * (w.image_height or 0) != width * height:
            low = _routes(estimate(w.model_copy(update=_size(width, height))), gpu)
            if low:
                parts.append(_phrase("low_res", *low[-1], res=res))  # the fastest that fits
        if entry.get("smaller"):
            small = _routes(estimate(Workload(model=entry["smaller"], **_size(width, height))), gpu)
            if small:
                name = catalog.models()[entry["smaller"]].name
                note = entry.get("note", {"zh": "", "en": ""})
                parts.append(_phrase("smaller", *small[-1], res=res, name=name, note=note))
    if not parts:
        return None
    routes = {
        lang: ("；" if lang == "zh" else "; ").join(p[lang] for p in parts) for lang in ("zh", "en")
    }
    return Pitfall(
        code="consumer_card_route",
        severity="info",
        params={"gpu": gpu.name},
        lang_params={"routes": routes},
    )


def _size(width: int | None, height: int | None) -> dict[str, int]:
    return {"image_width": width, "image_height": height} if width and height else {}


def _routes(result: EstimateResult, gpu: GpuSpec) -> list[tuple[str, str]]:
    """How it runs on the reference card, as (how, GiB per card): resident, or the
    small-card recipe and then a faster route at a smaller format; empty when nothing fits."""
    if result.estimate is None:
        return []
    usable = gpu.usable_vram_bytes
    if result.estimate.total_bytes <= usable * (1 - HEADROOM):
        return [("", _gib(result))]
    found = small_card_recipe(
        result, gpu, int(usable * (1 - HEADROOM)), int(usable * (1 - MIN_FREE))
    )
    if found is None:
        return []
    code, run = found
    out = [(code, _gib(estimate(run)))]
    faster = faster_route_run(result, run, gpu)
    if faster is not None:
        out.append((faster[0], _gib(faster[1])))
    return out


def _gib(result: EstimateResult) -> str:
    assert result.estimate is not None
    return f"{result.estimate.total_bytes / GIB:.1f} GiB"


def _how(code: str, lang: str) -> str:
    if not code:
        return ""
    name, _, fmt = code.partition(":")
    return pitfall_texts()["consumer_card_route"]["how"][name][lang].format(fmt=fmt)


def _phrase(
    key: str,
    code: str,
    need: str,
    res: str = "",
    name: str = "",
    note: dict[str, str] | None = None,
) -> dict[str, str]:
    texts = pitfall_texts()["consumer_card_route"]["how"][key]
    return {
        lang: texts[lang].format(
            how=_how(code, lang), need=need, res=res, name=name, note=(note or {}).get(lang, "")
        )
        for lang in ("zh", "en")
    }
