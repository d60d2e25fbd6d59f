"""Whisper's decoder cross-attends to the encoder's 1500 frames (max_source_positions) and
holds at most 448 tokens of its own (max_target_positions; openai/whisper-large-v2
config.json): the frames' keys and values are counted once, whether the question leaves
the prompt out or states it as the audio's 1500 frames."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload


def kv(**kw: object) -> float:
    est = estimate(Workload(model="whisper-large-v2", weights_format="fp16", **kw)).estimate
    assert est is not None
    return next(t.bytes for t in est.terms if t.name == "kv_cache")


def test_a_prompt_stated_as_the_encoder_frames_is_not_added_to_them() -> None:
    stated = kv(batch_size=5, prompt_tokens=1500, new_tokens=224)
    left_out = kv(batch_size=5, new_tokens=224)
    per_token = 32 * 2 * 20 * 64 * 2  # decoder layers x K,V x heads x head_dim x fp16
    assert abs(stated - per_token * (1500 + 224) * 5) < per_token * 5
    # without a prompt: the frames plus one prompt token
    assert abs(left_out - stated) <= per_token * 5


def test_a_short_decoder_prompt_still_adds_the_frames() -> None:
    assert kv(batch_size=1, prompt_tokens=100, new_tokens=100) > 160 * 1024 * 1600
