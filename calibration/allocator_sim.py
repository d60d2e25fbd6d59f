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

Pure Python, no torch: calibration/allocator_rounding.py feeds it the timelines of
calibration/activations_cpu.py's LiveStorages.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


@dataclass(eq=False)
class Block:
    size: int
    offset: int
    segment: int
    small: bool
    free: bool = True
    prev: Block | None = None
    next: Block | None = None


@dataclass
class CachingAllocator:
    """Blocks per pool kept sorted by (size, segment, offset), as the allocator's sets."""

    pools: dict[bool, list[tuple[int, int, int, int]]] = field(
        default_factory=lambda: {True: [], False: []}
    )
    by_key: dict[tuple[int, int, int, int], Block] = field(default_factory=dict)
    segments: int = 0
    allocated: int = 0
    peak: int = 0
    reserved: int = 0

    @staticmethod
    def round_size(size: int) -> int:
        return MIN_BLOCK if size < MIN_BLOCK else MIN_BLOCK * -(-size // MIN_BLOCK)

    @staticmethod
    def allocation_size(size: int) -> int:
        if size <= SMALL_SIZE:
            return SMALL_BUFFER
        if size < MIN_LARGE_ALLOC:
            return LARGE_BUFFER
        return ROUND_LARGE * -(-size // ROUND_LARGE)

    def _key(self, b: Block) -> tuple[int, int, int, int]:
        return (b.size, b.segment, b.offset, id(b))

    def _insert(self, b: Block) -> None:
        key = self._key(b)
        bisect.insort(self.pools[b.small], key)
        self.by_key[key] = b

    def _remove(self, b: Block) -> None:
        key = self._key(b)
        pool = self.pools[b.small]
        pool.pop(bisect.bisect_left(pool, key))
        del self.by_key[key]

    def malloc(self, request: int) -> Block:
        size = self.round_size(request)
        small = size <= SMALL_SIZE
        pool = self.pools[small]
        i = bisect.bisect_left(pool, (size, -1, -1, -1))
        if i < len(pool):
            block = self.by_key[pool[i]]
            self._remove(block)
        else:
            seg = self.allocation_size(size)
            self.reserved += seg
            block = Block(seg, 0, self.segments, small)
            self.segments += 1
        remaining = block.size - size
        split = remaining >= MIN_BLOCK if small else remaining > SMALL_SIZE
        if split:
            rest = Block(remaining, block.offset + size, block.segment, small)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            self._insert(rest)
        block.free = False
        self.allocated += block.size
        self.peak = max(self.peak, self.allocated)
        return block

    def free(self, block: Block) -> None:
        block.free = True
        self.allocated -= block.size
        for neighbour in (block.prev, block.next):
            if neighbour is not None and neighbour.free:
                self._remove(neighbour)
                if neighbour is block.prev:
                    block.offset = neighbour.offset
                    block.prev = neighbour.prev
                    if neighbour.prev is not None:
                        neighbour.prev.next = block
                else:
                    block.next = neighbour.next
                    if neighbour.next is not None:
                        neighbour.next.prev = block
                block.size += neighbour.size
        self._insert(block)


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
