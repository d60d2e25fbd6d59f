"""Speed targets, measured (not asserted in tests): parse < 2 ms, estimate < 1 ms; a
recommendation (estimate + ranking over the catalog) for a question never asked before
< 1 ms; a remembered answer (parse + recommendation + rendered reply, advisor.memo) < 0.2 ms;
a cached Hub answer (cache read + question + recommendation) < 5 ms.

    python bench/speed.py

Rows: "cold" runs with every memo off (the engine's own cost); "new question" clears the
per-question memos before each call and keeps the per-card tables built at start-up (card
prices), which is what a question no one asked yet costs in the running bot; "remembered"
is the same question again.
"""

from __future__ import annotations

import statistics
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from types import SimpleNamespace  # noqa: E402

from advisor import memo  # noqa: E402
from advisor.memory import estimate  # noqa: E402
from advisor.parse import parse_query  # noqa: E402
from advisor.recommend import recommend  # noqa: E402
from bot.answer import answer_text  # noqa: E402
from checks.answer_questions import QUICK_QUESTIONS as QUERIES  # noqa: E402

# The parser's table of real lines (tests/data/parse_lines.toml), timed as a second row.
TABLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "parse_lines.toml"


def timeit(fn, n: int, before=None) -> tuple[float, float]:  # noqa: ANN001
    """Median and p99 of `n` calls, in ms; `before` runs untimed before each."""
    samples = []
    for _ in range(n):
        if before is not None:
            before()
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def cold(fn):  # noqa: ANN001, ANN201
    """`fn` with every memo off."""

    def run() -> None:
        memo.set_enabled(False)
        try:
            fn()
        finally:
            memo.set_enabled(True)

    return run


def main() -> None:
    parsed = [parse_query(q) for q in QUERIES]
    workloads = [p.workload for p in parsed]
    lines = [row["t"] for row in tomllib.loads(TABLE.read_text())["line"]]
    # What bot.answer reads of a reply's context: the language and the price-list setting.
    readers = [
        SimpleNamespace(lang=lang, settings=SimpleNamespace(prices_file=None))
        for lang in ("zh", "en")
    ]

    def answers() -> None:
        for p in parsed:
            for r in readers:
                answer_text(p, r)  # type: ignore[arg-type]

    answers()  # start-up: catalogs, price tables, templates
    n_answers = len(parsed) * len(readers)
    # (name, fn, calls per fn, target ms per call, repeats, untimed before each)
    rows = [
        ("parse_query", cold(lambda: [parse_query(q) for q in QUERIES]), len(QUERIES), 2.0, 100),
        ("parse (table)", cold(lambda: [parse_query(q) for q in lines]), len(lines), 2.0, 10),
        ("estimate", cold(lambda: [estimate(w) for w in workloads]), len(workloads), 1.0, 100),
        (
            "recommend, cold",
            cold(lambda: [recommend(w) for w in workloads]),
            len(workloads),
            5.0,
            20,
        ),
        (
            "recommend, new question",
            lambda: [recommend(w) for w in workloads],
            len(workloads),
            1.0,
            20,
            memo.clear_questions,
        ),
        ("answer, new question", answers, n_answers, None, 10, memo.clear_questions),
        ("answer, remembered", answers, n_answers, 0.2, 200),
    ]
    print(f"{'operation':24} {'median ms':>10} {'p99 ms':>8} {'target ms':>10}")
    medians = {}
    for name, fn, per, target, n, *before in rows:
        med, p99 = timeit(fn, n, before[0] if before else None)
        medians[name] = med / per
        verdict = "" if target is None else "ok" if med / per <= target else "SLOW"
        shown = "-" if target is None else f"{target:.1f}"
        print(f"{name:24} {med / per:10.3f} {p99 / per:8.3f} {shown:>10}  {verdict}")
    chart_cost(parsed, medians["answer, new question"])
    estimates_per_question(workloads)
    cached_hub_answer()


def chart_cost(parsed: list, answer_ms: float) -> None:  # noqa: ANN001
    """The 📊 picture beside an answer's text (bot/chart.py): drawn once per answer and
    language when its button is pressed (bot.answer keeps it), in a worker thread, so the
    event loop does not wait for it. Its cost per answer, and as a multiple of a new
    question's answer."""
    from advisor.recommend import recommend_query
    from bot.chart import draw

    recs = [
        (recommend_query(p, default_currency="CNY" if lang == "zh" else "USD"), lang)
        for p in parsed[:8]
        for lang in ("zh", "en")
    ]
    draw(*recs[0])  # start-up: matplotlib's import and font cache
    med, p99 = timeit(lambda: [draw(r, lang) for r, lang in recs], 5)
    per = med / len(recs)
    print(
        f"{'chart, per answer':24} {per:10.3f} {p99 / len(recs):8.3f} {'-':>10}  "
        f"{per / answer_ms:.0f}x an answer's text (drawn in a thread, once per answer)"
    )


def estimates_per_question(workloads: list) -> None:  # noqa: ANN001
    """What a new question's recommendation costs in memory estimates (the engine's unit of
    work, ~0.1 ms each): full ones (shown, or read for their terms) and lean ones (the
    changes tried, read for their totals; advisor.recommend.estimates)."""
    memo.clear_questions()
    for w in workloads:
        recommend(w)
    stats = memo.stats()
    full, lean = stats["estimate"][2], stats["trial_estimate"][2]
    n = len(workloads)
    print(f"new question: {full / n:.1f} full + {lean / n:.1f} lean estimates per question")


def cached_hub_answer() -> None:
    """A Hub model answered from the cache (no network), beside the same question about a
    catalog model measured in the same run: the ratio is the cost of coming from the Hub.
    `memory` is the steady state (the bot's in-process copy); `sqlite` reads the row from
    the database each time (the first question after a restart)."""
    import asyncio
    import json
    import tempfile

    from advisor.hubspec import HubFacts, count_tensors, quant_info
    from advisor.recommend import recommend_query
    from bot.storage import Repository
    from hublookup.cache import HubCache
    from hublookup.query import hub_query
    from hublookup.resolve import resolve

    data = Path(__file__).resolve().parent.parent / "tests" / "data" / "hub"
    folder = data / "CohereForAI__aya-23-8B"
    config = json.loads((folder / "config.json").read_text())
    tensors = {
        k: (v[0], v[1]) for k, v in json.loads((folder / "tensors.json").read_text()).items()
    }
    facts = HubFacts(
        repo_id="CohereForAI/aya-23-8B",
        read_at="2026-11-30T00:00:00+00:00",
        config=config,
        tensors=count_tensors(tensors, quant_info(config)),
    )
    text, baseline_text = "CohereForAI/aya-23-8B 4090 int4", "qwen3-8b 4090 int4"

    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            repo = await Repository.open(Path(tmp) / "bench.sqlite3")
            warm = HubCache(repo)
            await warm.put(facts)

            async def lookup(cache: HubCache):  # noqa: ANN202
                hub = await resolve(facts.repo_id, cache, None)
                assert hub.model is not None
                return hub_query(text, facts.repo_id, hub.model)

            async def timed(make_cache, n: int, full: bool) -> float:  # noqa: ANN001
                samples = []
                for _ in range(n):
                    cache = make_cache()
                    t = time.perf_counter()
                    parsed = await lookup(cache)
                    if full:
                        recommend_query(parsed, default_currency="CNY")
                    samples.append((time.perf_counter() - t) * 1000)
                return statistics.median(samples)

            base, _ = timeit(
                lambda: recommend_query(parse_query(baseline_text), default_currency="CNY"), 30
            )
            rows = [
                ("hub hit (mem)", await timed(lambda: warm, 200, False)),
                ("hub hit (db)", await timed(lambda: HubCache(repo), 100, False)),
                ("hub answer", await timed(lambda: warm, 30, True)),
            ]
            await repo.close()
        for name, ms in rows:
            if name == "hub answer":  # the recommendation's own cost dominates: a ratio
                print(
                    f"{name:14} {ms:10.3f} {'':8} {'':>10}  {ms / base:.2f}x the catalog question"
                )
            else:
                print(f"{name:14} {ms:10.3f} {'':8} {5.0:10.1f}  {'ok' if ms <= 5.0 else 'SLOW'}")

    asyncio.run(run())


if __name__ == "__main__":
    main()
