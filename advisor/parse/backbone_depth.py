"""A detector's or segmenter's backbone depth as people write it ("mask rcnn R101-FPN",
"faster rcnn resnet-101", "pspnet res101"): the catalog names its detection and segmentation
entries by backbone ("faster-rcnn-r50-fpn", "faster-rcnn-r101-fpn",
advisor/data/models/detection_segmentation.toml), and a model read by its family alias
("mask rcnn") is the R50 entry. A depth named beside it picks that depth's entry where the
catalog has one; where it has none, the depth is kept as unread so the answer says first that
the figures are for the depth read, not the one asked."""

from __future__ import annotations

import re

from advisor import catalog
from advisor.parse.scan import Reading

# "R101", "r-101", "R101-FPN", "resnet-101", "resnet101", "res101": a ResNet depth
# (torchvision's and detectron2's model zoos name 18, 34, 50, 101 and 152)
_DEPTH = re.compile(r"(?<![a-z0-9])(?:resnet|res|r)[\s\-_]?(18|34|50|101|152)(?![0-9])")
# the depth in a catalog id: "mask-rcnn-r50-fpn", "pspnet-r101"
_ID_DEPTH = re.compile(r"-r(18|34|50|101|152)(?=-|$)")
_FPN = re.compile(r"-?fpn")


def pick_depth(r: Reading, text: str, ignored: list[str]) -> tuple[str | None, list[str]]:
    """The backbone depth named in `text` applied to the model read: its sibling entry of that
    depth replaces it; without one, the depth as named ("R101") is returned, unread. The
    leftover "fpn" of "R101-FPN" is dropped when the model read is an FPN network."""
    if r.spec is None:
        return None, ignored
    own = _ID_DEPTH.search(r.spec.id)
    if own is None:
        return None, ignored
    if r.spec.id.endswith("-fpn"):
        ignored = [w for w in ignored if not _FPN.fullmatch(w)]
    named = [d for d in _DEPTH.findall(text.lower())]
    if not named or own.group(1) in named:
        return None, ignored
    depth = named[0]
    sibling = catalog.find_model(_ID_DEPTH.sub(f"-r{depth}", r.spec.id, count=1))
    if sibling is not None and sibling.kind == r.spec.kind:
        r.spec = sibling
        return None, ignored
    return f"R{depth}", ignored
