"""`python bench/gc_pauses.py [--no-freeze]`: the garbage collector's pauses while the engine
answers 1,500 generated questions after start-up (bot.warmup.warm_engine), by generation:
how many, the longest and their sum. A full (generation 2) collection walks every object the
process holds; the load bench's p99 is where such a pause lands in someone's update.
`--no-freeze` undoes the gc.freeze() start-up does, and `--threshold N` sets the young
generation's size (start-up sets 7,000; CPython's default is 700), for the figures beside."""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.parse import parse_query  # noqa: E402
from advisor.recommend import recommend_query  # noqa: E402
from advisor.render import render  # noqa: E402
from bot.warmup import warm_engine  # noqa: E402

MODELS = ("qwen2.5-7b", "llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b", "llama-3.1-70b", "glm-4-9b")
CARDS = ("4090", "3090", "a100", "h100", "l40s", "a6000", "4060 ti 16g", "v100")
FORMATS = ("bf16", "int4", "int8", "awq")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-freeze", action="store_true")
    ap.add_argument("--questions", type=int, default=1500)
    ap.add_argument("--threshold", type=int, default=None)
    args = ap.parse_args()
    warm_engine(None)
    if args.no_freeze:
        gc.unfreeze()
    if args.threshold is not None:
        gc.set_threshold(args.threshold, *gc.get_threshold()[1:])
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(timed)
    rng = random.Random(1)
    t0 = time.perf_counter()
    for _ in range(args.questions):
        line = (
            f"{rng.choice(MODELS)} {rng.choice(FORMATS)} {rng.choice((2048, 4096, 8192, 32768))}"
            f" batch {rng.randint(1, 16)} on {rng.randint(1, 4)}x {rng.choice(CARDS)}"
        )
        parsed = parse_query(line)
        if parsed.ok:
            rec = recommend_query(parsed, default_currency="USD")
            render("answer", "en", rec=rec, parsed=parsed, canonical=line)
    gc.callbacks.remove(timed)
    print(
        f"{args.questions} questions in {time.perf_counter() - t0:.1f} s, frozen at start-up: "
        f"{'no' if args.no_freeze else 'yes'} ({gc.get_freeze_count()} objects), "
        f"young generation {gc.get_threshold()[0]}"
    )
    for gen, ms in pauses.items():
        if ms:
            print(
                f"  generation {gen}: {len(ms)} pauses, longest {max(ms):.1f} ms, sum {sum(ms):.0f} ms"
            )


if __name__ == "__main__":
    main()
