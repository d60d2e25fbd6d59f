"""diffusers' group offloading as a question states it (docs "Reduce memory usage" > group
offloading; hooks/group_offloading.py). The offload mode itself ("group offload",
"enable_group_offload", "leaf_level") is read with the other offload words
(data/vocab/runtimes.toml [offload]); here the settings it takes: the text encoder named
with block-level offloading (onloaded whole: pipeline_stages.py
text_encoder_block_offload_bytes), the denoiser's num_blocks_per_group and use_stream
(pipeline_stages.py streamed_denoiser_bytes)."""

from __future__ import annotations

import re
from functools import cache

from advisor.models.choices import Offload
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan

# A pipeline's text encoder as a question names it (the component, or the encoders people
# name: T5, umT5, CLIP, 文本编码器).
_TEXT_ENCODER = r"(?:text[\s_-]?encoders?|(?<![a-z0-9])(?:u?mt5|t5|clip)(?![a-z0-9])|文本编码器)"
# diffusers' num_blocks_per_group (apply_group_offloading / enable_group_offload)
_BLOCKS_PER_GROUP = r"num[\s_-]?blocks[\s_-]?per[\s_-]?group\s*[:=]?\s*(\d{1,3})(?![\d.])"


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    block_level = vocab.knob_words("block_level")
    return {
        name: re.compile(pattern, re.I)
        for name, pattern in {
            # every word below in one pattern: most lines have none and cost one scan
            "any": vocab.alternation(
                vocab.load("words")["knobs"]["block_level"]
                + vocab.load("words")["knobs"]["group_offload"]
            ),
            # the text encoder named with block-level group offloading, either way round
            # ("apply_group_offloading(text_encoder, offload_type='block_level',
            # num_blocks_per_group=4)", "t5 block-level", "block_level 卸载文本编码器"): its
            # group size is the encoder's, not the denoiser's
            "te_block_level": (
                rf"{_TEXT_ENCODER}[^.;。\n]{{0,40}}?{block_level}"
                rf"(?:[^.;。\n)]{{0,40}}?{_BLOCKS_PER_GROUP})?"
                rf"|{block_level}[^.;。\n]{{0,40}}?{_TEXT_ENCODER}"
            ),
            # the group offloading's own type on the denoiser ("offload_type='block_level'")
            "block_level": rf"(?:(?:offload)?[\s_-]?type\s*=\s*['\"]?)?{block_level}['\"]?",
            "group_blocks": _BLOCKS_PER_GROUP,
            "use_stream": r"(?<![a-z0-9])use[\s_-]?stream(?:\s*[:=]\s*true)?(?![a-z0-9])",
        }.items()
    }


def recognize_group_offload(s: Scan, r: Reading) -> None:
    p = _patterns()
    if not p["any"].search(s.text):
        return
    if s.take(p["te_block_level"]):
        r.fields["text_encoder_block_offload"] = True
    elif r.fields.get("cpu_offload") == Offload.sequential:
        s.take(p["block_level"])
    if m := s.take(p["group_blocks"]):
        r.fields["group_offload_blocks"] = int(m.group(1))
        r.fields.setdefault("cpu_offload", Offload.sequential)
    if s.take(p["use_stream"]):
        r.fields["group_offload_stream"] = True
