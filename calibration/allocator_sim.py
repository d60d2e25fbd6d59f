"""Replay an allocation timeline through a model of PyTorch's CUDA caching allocator.

`torch.cuda.max_memory_allocated()` (what mmcv, mmengine and detectron2 log as `memory` /
`max_mem`) counts the allocator's blocks, not the bytes the tensors asked for. The rules
below are those of c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator, one stream,
no expandable segments, default max_split_size; read 2026-12-01 at pytorch/pytorch main):

- round_size: a request is rounded up to a multiple of 512 bytes (kMinBlockSize);
- requests up to 1 MiB (kSmallSize) come from the small pool, larger ones from the large;
- get_free_block: the smallest cached block of the pool that fits (best fit);
- with none, a new segment: 2 MiB for a small request (kSmallBuffer), 20 MiB for a
  request under 10 MiB (kLargeBuffer, kMinLargeAlloc), else the request rounded up to
  2 MiB (kRoundLarge);
- should_split: a small-pool block is split when 512 bytes or more remain; a large-pool
  block only when MORE THAN 1 MiB remains, otherwise the whole block is handed out;
- allocated_bytes grows by the block's size, so the unsplit remainder counts;
- a freed block merges with free neighbours of its segment (try_merge_blocks).

The model itself is the engine's (advisor/memory/allocator.py, which the estimates replay
too): one copy of the rules. Pure Python, no torch: calibration/allocator_rounding.py feeds
`replay` the timelines of calibration/activations_cpu.py's LiveStorages.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from advisor.memory.allocator import Block, CachingAllocator  # noqa: E402

__all__ = ["Block", "CachingAllocator", "replay"]


def replay(timeline: list[tuple[int, int]]) -> tuple[int, int, int]:
    """(peak of requested bytes, peak of allocated block bytes, segments reserved) over a
    timeline of (allocation number, +bytes / -bytes)."""
    alloc = CachingAllocator()
    live: dict[int, Block] = {}
    current = raw_peak = 0
    for number, delta in timeline:
        if delta > 0:
            live[number] = alloc.malloc(delta)
            current += delta
            raw_peak = max(raw_peak, current)
        else:
            alloc.free(live.pop(number))
            current += delta
    return raw_peak, alloc.peak, alloc.reserved
