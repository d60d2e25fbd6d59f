"""The jobs a purchase line names ("32b推理和7b lora微调"): each a size with its task word
beside it."""

from __future__ import annotations

import re

# A size with the task written right beside it, either side ("32b推理", "7b lora微调",
# "inference of 32b", "lora 7b"): one job of a purchase line naming several
_TASKS = (
    ("qlora", "qlora"),
    ("lora", "lora"),
    ("全参", "full"),
    ("full", "full"),
    ("微调", "lora"),
    ("fine-tun", "lora"),
    ("finetun", "lora"),
    ("训练", "lora"),
    ("推理", "inference"),
    ("部署", "inference"),
    ("inference", "inference"),
    ("serving", "inference"),
)
_TASK = "|".join(re.escape(word) for word, _ in _TASKS)
_SIZE = r"(?<![a-z0-9.\-_:])(?P<size>\d+(?:\.\d+)?)\s?b(?![a-z0-9])"
_JOB_AFTER = re.compile(_SIZE + r"\s*(?:的\s*)?(?P<task>(?:(?:" + _TASK + r")\s*)+)")
_JOB_BEFORE = re.compile(r"(?P<task>" + _TASK + r")[a-z]*\s*(?:of\s+|on\s+|a\s+)?" + _SIZE)


def read_jobs(text: str) -> list[tuple[float, str]]:
    """The jobs a purchase line names, each a size with its task word beside it: two or
    more with different sizes, else none (one job is the line's workload)."""
    low = text.lower()
    found: list[tuple[int, float, str]] = []
    for pattern in (_JOB_AFTER, _JOB_BEFORE):
        for m in pattern.finditer(low):
            words = m.group("task")
            mode = next(mode for word, mode in _TASKS if word in words)
            if all(pos != m.start("size") for pos, _, _ in found):  # the task after it first
                found.append((m.start("size"), float(m.group("size")), mode))
    jobs: list[tuple[float, str]] = []
    for _, size, mode in sorted(found):
        if not any(size == s for s, _ in jobs):
            jobs.append((size, mode))
    return jobs if len(jobs) > 1 else []
