"""PyTorch's CUDA caching allocator, replayed over an allocation timeline.

What nvidia-smi shows of a process is the memory the allocator has reserved (its segments),
not the tensors alive at the peak. The rules below are those of
c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator: one stream, no expandable
segments, default max_split_size; read 2026-12-01 at pytorch/pytorch main, the same rules
calibration/allocator_sim.py replays for the CPU-measured timelines):

- a request is rounded up to a multiple of 512 bytes (kMinBlockSize);
- requests up to 1 MiB come from the small pool, larger ones from the large pool;
- the smallest cached free block of the pool that fits is taken (best fit);
- with none, a new segment: 2 MiB for a small request, 20 MiB for a request under 10 MiB,
  else the request rounded up to 2 MiB;
- a small-pool block is split when 512 bytes or more remain, a large-pool block only when
  more than 1 MiB remains;
- a freed block merges with the free neighbours of its own segment; segments are kept.

Used where a model's code has an allocation pattern the flat slack of `terms.finish` does not
cover (runtimes/transformers.py: a cache concatenated layer by layer during the prefill).
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
    """Free blocks per pool, sorted by (size, segment, offset) as the allocator's sets."""

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
        return MIN_BLOCK * max(1, -(-size // MIN_BLOCK))

    @staticmethod
    def segment_size(size: int) -> int:
        if size <= SMALL_SIZE:
            return SMALL_BUFFER
        if size < MIN_LARGE_ALLOC:
            return LARGE_BUFFER
        return ROUND_LARGE * -(-size // ROUND_LARGE)

    @staticmethod
    def _key(b: Block) -> tuple[int, int, int, int]:
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
            seg = self.segment_size(size)
            self.reserved += seg
            block = Block(seg, 0, self.segments, small)
            self.segments += 1
        remaining = block.size - size
        if remaining >= MIN_BLOCK if small else remaining > SMALL_SIZE:
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
            if neighbour is None or not neighbour.free:
                continue
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


def replay(events: list[tuple[str, int]]) -> tuple[int, int]:
    """(peak allocated, reserved) bytes over a timeline of ("name", +bytes) allocations and
    ("name", 0) frees; a name may be reused once its block is freed."""
    alloc = CachingAllocator()
    live: dict[str, Block] = {}
    for name, size in events:
        if size > 0:
            live[name] = alloc.malloc(size)
        else:
            alloc.free(live.pop(name))
    return alloc.peak, alloc.reserved
