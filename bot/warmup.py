"""Before the first update: the engine answers a sample question, as a start-up check and so
that the catalogs, price list, parser patterns and templates are loaded once, up front
(and the per-card price tables of advisor.memo built for both currencies, and the answer
rendered in both languages: the labels, formulas and card notes it reads).

Why up front: cold, the first answer took 0.3–0.6 s (catalog TOML, pattern compilation)
against 0.03 s warm, and every update that arrived meanwhile waited behind it. After a crash
the restarted bot replays its inbox at once; the durability bench showed short-lived
restarts spending their life on this instead of on the backlog. A broken PRICES_FILE is
found here, with one line, instead of at the first question.
"""

from __future__ import annotations

from pathlib import Path

from advisor.parse import canonical_query, parse_query
from advisor.recommend import recommend_query
from advisor.render import preload_templates, render

SAMPLE_QUESTION = "qwen2.5-7b int4 on 4090 ¥5/h"


class EngineError(Exception):
    """The engine cannot answer the sample question (bad price list, broken catalog)."""


def warm_engine(prices_file: Path | None) -> None:
    try:
        preload_templates()
        parsed = parse_query(SAMPLE_QUESTION)
        for currency, lang in (("CNY", "zh"), ("USD", "en")):
            rec = recommend_query(parsed, default_currency=currency, prices_file=prices_file)
            # the labels, formulas and card notes a reply reads, loaded now as well
            for view in ("answer", "details"):
                render(view, lang, rec=rec, parsed=parsed, canonical=canonical_query(parsed))
    except Exception as exc:  # noqa: BLE001 - any failure here is the operator's to fix
        raise EngineError(f"the engine cannot answer a sample question: {exc}") from exc
