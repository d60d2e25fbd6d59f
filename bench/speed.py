"""Speed targets, measured (not asserted in tests):
parse < 2 ms, estimate < 1 ms, recommendation (estimate + ranking over the catalog) < 5 ms.

    python bench/speed.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.memory import estimate  # noqa: E402
from advisor.parse import parse_query  # noqa: E402
from advisor.recommend import recommend  # noqa: E402

QUERIES = [
    "/vram 13B fp16",
    "qwen2.5-72b int4 32k",
    "训练 llama3-8b lora",
    "sdxl 1024 出4张图",
    "8×A100 全参微调 70b zero3",
    "我有2×3090 想跑 qwen2.5-32b awq ¥3/h",
]


def timeit(fn, n: int) -> tuple[float, float]:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def main() -> None:
    workloads = [parse_query(q).workload for q in QUERIES]
    for q in QUERIES:  # warm caches (catalog load) once
        parse_query(q)
    rows = [
        ("parse_query", lambda: [parse_query(q) for q in QUERIES], len(QUERIES), 2.0),
        ("estimate", lambda: [estimate(w) for w in workloads], len(workloads), 1.0),
        ("recommend", lambda: [recommend(w) for w in workloads], len(workloads), 5.0),
    ]
    print(f"{'operation':14} {'median ms':>10} {'p99 ms':>8} {'target ms':>10}")
    for name, fn, per, target in rows:
        med, p99 = timeit(fn, 200 if name != "recommend" else 30)
        print(
            f"{name:14} {med / per:10.3f} {p99 / per:8.3f} {target:10.1f}  {'ok' if med / per <= target else 'SLOW'}"
        )


if __name__ == "__main__":
    main()
