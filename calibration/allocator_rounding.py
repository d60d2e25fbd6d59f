"""What the CUDA caching allocator's block rounding adds to a training step's peak.

    /work/torchenv/bin/python calibration/allocator_rounding.py [--only NAME ...]

Runs the same CPU training steps as calibration/activations_cpu.py (its builders and its
LiveStorages timeline of every storage's size and lifetime) and replays each timeline
through calibration/allocator_sim.py's model of PyTorch's CUDA caching allocator, twice in a row
(the second iteration meets the blocks the first one left cached, as every later training
step does; the parameters' gradients are freed in between, zero_grad(set_to_none=True)).
Prints the peak of requested bytes, the peak of allocated block bytes and the difference,
per image, and writes calibration/data/allocator_rounding_cpu.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import activations_cpu as ac  # noqa: E402
from allocator_sim import CachingAllocator  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "allocator_rounding_cpu.json"


class CapturingStorages(ac.LiveStorages):
    last: CapturingStorages | None = None

    def __init__(self) -> None:
        super().__init__()
        CapturingStorages.last = self


def replay_twice(timeline: list[tuple[int, int]]) -> dict:
    """Two iterations of the same timeline on one allocator; the allocations still live
    at the end of the first (the gradients) are freed before the second starts."""
    alloc = CachingAllocator()
    out = {}
    for iteration in (1, 2):
        live: dict[int, object] = {}
        current = raw_peak = 0
        alloc.peak = alloc.allocated
        for number, delta in timeline:
            if delta > 0:
                live[number] = alloc.malloc(delta)
                current += delta
            else:
                alloc.free(live.pop(number))  # type: ignore[arg-type]
                current += delta
            raw_peak = max(raw_peak, current)
        out[iteration] = {
            "requested_peak": raw_peak,
            "allocated_peak": alloc.peak,
            "reserved": alloc.reserved,
        }
        for block in live.values():
            alloc.free(block)  # type: ignore[arg-type]
    return out


CASES: dict[str, Callable[[], dict]] = {
    "fasterrcnn_resnet50_fpn": lambda: ac.detector("fasterrcnn", "resnet50", 1),
    "fasterrcnn_resnet50_fpn_bn_eval": lambda: ac.detector("fasterrcnn", "resnet50", 1, False),
    "fasterrcnn_resnet101_fpn_bn_eval": lambda: ac.detector("fasterrcnn", "resnet101", 1, False),
    "fasterrcnn_resnet50_fpn_bn_eval_b2": lambda: ac.detector("fasterrcnn", "resnet50", 2, False),
    "retinanet_resnet50_fpn_bn_eval": lambda: ac.detector("retinanet", "resnet50", 1, False),
    "resnet50_b32": lambda: ac.classification("resnet50", 224, 32),
    "yolov8n_b8": lambda: ac.yolo("yolov8n.yaml", 640, 8),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    ac.torch.manual_seed(0)
    ac.torch.set_num_threads(2)
    ac.LiveStorages = CapturingStorages  # count_step builds its tracker by this name
    results = json.loads(OUT.read_text())["results"] if OUT.exists() else {}
    for name, run in CASES.items():
        if args.only and name not in args.only:
            continue
        record = run()
        tracker = CapturingStorages.last
        assert tracker is not None
        sim = replay_twice(tracker.timeline)
        worst = max(sim.values(), key=lambda r: r["allocated_peak"] - r["requested_peak"])
        extra = worst["allocated_peak"] - worst["requested_peak"]
        results[name] = {
            "batch": record["batch"],
            "input": record["input"],
            "peak_live_bytes": record["peak_live_bytes"],
            "iterations": sim,
            "rounding_bytes": extra,
            "rounding_share_of_peak": round(extra / record["peak_live_bytes"], 4),
            "allocations": sum(1 for _, d in tracker.timeline if d > 0),
        }
        print(
            f"{name:40s} peak {record['peak_live_bytes'] / 2**20:7.0f} MiB  "
            f"rounding +{extra / 2**20:6.1f} MiB ({100 * extra / record['peak_live_bytes']:.1f}%)"
            f"  iter1 +{(sim[1]['allocated_peak'] - sim[1]['requested_peak']) / 2**20:.1f}"
            f"  iter2 +{(sim[2]['allocated_peak'] - sim[2]['requested_peak']) / 2**20:.1f}",
            flush=True,
        )
        OUT.write_text(
            json.dumps(
                {
                    "setup": {
                        "torch": ac.torch.__version__,
                        "device": "cpu timeline, simulated CUDA caching allocator",
                        "date": dt.date.today().isoformat(),
                        "script": "calibration/allocator_rounding.py",
                    },
                    "results": results,
                },
                indent=1,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
