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

import gc
from pathlib import Path

from advisor import memo
from advisor.parse import canonical_query, parse_query
from advisor.recommend import recommend_query
from advisor.render import preload_templates, render
from advisor.tables import build_tables

SAMPLE_QUESTION = "qwen2.5-7b int4 on 4090 ¥5/h"
YOUNG_GENERATION = 7000  # objects allocated between young collections (CPython: 700)
# Lines that reach the recognizers the sample question does not (tasks and kinds, Chinese
# wording, an unknown name, an Ollama tag, a machine list, a price per card-hour), parsed at
# start-up for the patterns they compile. Their answers are not kept (`warm_engine` forgets
# every per-question result after): start-up builds tables, it answers nobody's question.
WARM_LINES = (
    "全参微调 mistral-7b bf16 两张 a100 zero2",
    "qlora 训练 yi-34b 用 4090，batch 2",
    "stable diffusion 1.5 出图 512 分辨率 8g 显存",
    "gemma2:27b q4_K_M 单卡 A6000",
    "pythia-9.9b 推理",
    "lab 2x l40s 48g ¥4/卡时, 3 台 4090 工作站",
    "renderer blender 4k 视频",
)


class EngineError(Exception):
    """The engine cannot answer the sample question (bad price list, broken catalog)."""


def warm_engine(prices_file: Path | None) -> None:
    try:
        preload_templates()
        build_tables()
        for line in WARM_LINES:
            parse_query(line)
        parsed = parse_query(SAMPLE_QUESTION)
        for currency, lang in (("CNY", "zh"), ("USD", "en")):
            rec = recommend_query(parsed, default_currency=currency, prices_file=prices_file)
            # the labels, formulas and card notes a reply reads, loaded now as well
            for view in ("answer", "details"):
                render(view, lang, rec=rec, parsed=parsed, canonical=canonical_query(parsed))
        memo.clear_questions()  # the tables stay; no question is answered in advance
    except Exception as exc:  # noqa: BLE001 - any failure here is the operator's to fix
        raise EngineError(f"the engine cannot answer a sample question: {exc}") from exc
    # What start-up built (catalogs, compiled patterns, templates, price tables) lives as
    # long as the process: out of the collector's generations, so a full collection does
    # not walk it again in the middle of someone's update.
    gc.freeze()
    # A young generation of 7,000 objects instead of CPython's 700: an answer allocates
    # thousands of short-lived containers, and collecting every 700 spent ~7% of the time
    # answering in the collector (bench/gc_pauses.py: 705 ms of pauses over 1,500 answers,
    # 223 ms at 7,000; the run 9.4 s -> 8.3 s). Refcounting frees what is not in a cycle.
    gc.set_threshold(YOUNG_GENERATION, *gc.get_threshold()[1:])
