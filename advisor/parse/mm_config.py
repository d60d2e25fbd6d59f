"""OpenMMLab config names as users paste them, read as the plain words they stand for.

The naming convention (mmdetection / mmsegmentation docs "Config Name Style", read
2026-12-07): ``{algorithm}_{backbone / neck}_{NxbM}-{schedule}_{dataset}[-{crop}]``, e.g.
``segformer_mit-b5_8xb1-160k_cityscapes-1024x1024``, ``rtmdet_l_8xb32-300e_coco``,
``mask-rcnn_r50_fpn_1x_coco``. ``NxbM`` is N GPUs x M images per GPU; the schedule is
iterations ("160k"), epochs ("300e") or the 12-epoch multiple ("1x", "ms-3x").

The name becomes words the vocabulary tables (data/vocab) already read: "segformer mit-b5
batch 1 cityscapes 1024x1024". M is the batch per card, which is what the parser's "batch"
means; a batch the question names itself wins over the config's. N is the card count the config was written for, not the user's machine: it is left
out, so the card count is the one the question names (per-card memory does not depend on N
under data parallelism). The schedule only sets the run's length and is left out too.
"""

from __future__ import annotations

import re

# A pasted token with underscores, optionally a path ("configs/segformer/...") and ".py".
_TOKEN = re.compile(
    r"(?<![\w./\-])[a-z0-9][a-z0-9./\-]*_[a-z0-9._/\-]*[a-z0-9](?:\.py)?(?![\w\-])", re.I
)
_GPUS_X_BATCH = re.compile(r"^(\d+)xb(\d+)(?:-[a-z0-9\-]+)?$", re.I)
# "160k", "300e", "1x", "ms-3x", "amp-1x", "lsj-100e": a schedule, with its optional tags
_SCHEDULE = re.compile(r"^(?:[a-z]+-)*\d+(?:x|e|k|ep|iter)$", re.I)
# "cityscapes-1024x1024", "ade20k-512x512": a dataset with its crop
_DATASET_CROP = re.compile(r"^([a-z][a-z0-9]*)-(\d+x\d+)$", re.I)
# A batch the question names outside the config name ("batch 1", "bs=2", "批大小 4")
_OWN_BATCH = re.compile(r"\bbatch|\bbs\b|批", re.I)


def _words(token: str, *, own_batch: bool) -> str | None:
    """The plain words of one config name, or None when the token is not one."""
    name = token.rsplit("/", 1)[-1]
    if name.lower().endswith(".py"):
        name = name[:-3]
    parts = [p for p in name.split("_") if p]
    batch = [m for m in map(_GPUS_X_BATCH.match, parts) if m]
    schedules = [p for p in parts if _SCHEDULE.match(p)]
    if not batch and not (schedules and len(parts) >= 3):
        return None
    words: list[str] = []
    for part in parts:
        if m := _GPUS_X_BATCH.match(part):
            if not own_batch:
                words.append(f"batch {m.group(2)}")
        elif _SCHEDULE.match(part):
            continue
        elif m := _DATASET_CROP.match(part):
            words.append(f"{m.group(1)} {m.group(2)}")
        else:
            words.append(part)
    return " ".join(words)


def expand_config_names(text: str) -> str:
    """Each OpenMMLab config name in ``text`` replaced by its plain words."""
    own_batch = bool(_OWN_BATCH.search(_TOKEN.sub(" ", text)))
    return _TOKEN.sub(lambda m: _words(m.group(0), own_batch=own_batch) or m.group(0), text)
