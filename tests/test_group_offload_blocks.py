"""diffusers' block-level group offloading of the denoiser (hooks/group_offloading.py
_apply_group_offloading_block_level): num_blocks_per_group of its blocks on the GPU at a
time; with use_stream the group is forced to one block and the next is prefetched, so two
are on the card. Leaf-level group offloading streams a leaf, as sequential offload does."""

from __future__ import annotations

import pytest

from advisor.memory import GIB, estimate
from advisor.models.workload import Workload
from advisor.parse import canonical_query, parse_query


def wan_14b(**extra: object) -> Workload:
    fields: dict = dict(
        model="wan2.1-t2v-14b",
        mode="inference",
        cpu_offload="sequential",
        video_frames=81,
        image_width=832,
        image_height=480,
        vae_tiling=True,
    )
    return Workload(**(fields | extra))


def weights(w: Workload) -> float:
    est = estimate(w).estimate
    assert est is not None
    return next(t.bytes for t in est.terms if t.name == "weights") / GIB


def test_a_group_of_blocks_is_that_share_of_the_denoiser_beside_the_vae() -> None:
    leaf = weights(wan_14b())
    four = weights(wan_14b(group_offload_blocks=4))
    # 4 of Wan2.1-14B's 40 blocks: a tenth of its bf16 weights more than a streamed leaf
    assert four - leaf == pytest.approx(14.0e9 * 2 * (4 / 40 - 1 / 50) / GIB, rel=0.05)


def test_a_stream_holds_one_block_and_the_prefetched_next_whatever_the_group_size() -> None:
    streamed = weights(wan_14b(group_offload_blocks=8, group_offload_stream=True))
    assert streamed == pytest.approx(weights(wan_14b(group_offload_blocks=2)), rel=0.01)


def test_the_breakdown_names_the_blocks_on_the_card_in_both_languages() -> None:
    from advisor.render import formula

    est = estimate(wan_14b(group_offload_blocks=4)).estimate
    assert est is not None
    term = next(t for t in est.terms if t.name == "weights")
    assert term.formula_key == "weights.group_offload_blocks"
    assert "4 of the denoiser's 40 blocks" in formula("en", term)
    assert "40 个块中一次有 4 个" in formula("zh", term)


@pytest.mark.parametrize(
    ("line", "blocks", "stream", "te_whole"),
    [
        (
            "wan2.1 14b 480p 81 frames transformer.enable_group_offload("
            "offload_type='block_level', num_blocks_per_group=4) on a 4090",
            4,
            False,
            False,
        ),
        (
            "wan2.1 14b 81 frames enable_group_offload leaf_level use_stream=True, "
            "apply_group_offloading(text_encoder, offload_type='block_level', "
            "num_blocks_per_group=4) 4090",
            None,
            True,
            True,
        ),
        ("hunyuanvideo 分组卸载 num_blocks_per_group 2 4090", 2, False, False),
    ],
)
def test_a_question_names_the_group_size_and_the_stream(
    line: str, blocks: int | None, stream: bool, te_whole: bool
) -> None:
    parsed = parse_query(line)
    w = parsed.workload
    assert w is not None and w.cpu_offload is not None
    assert w.cpu_offload.value == "sequential"
    assert w.group_offload_blocks == blocks and w.group_offload_stream == stream
    assert w.text_encoder_block_offload == te_whole
    again = parse_query(canonical_query(parsed)).workload
    assert again is not None
    assert (again.group_offload_blocks, again.group_offload_stream) == (blocks, stream)


def test_a_case_reads_the_denoisers_group_size_as_the_bot_does() -> None:
    from checks.note_numbers import numbers_in_notes

    notes = (
        "apply_group_offloading(transformer, offload_type='block_level', "
        "num_blocks_per_group=2, use_stream=True); the text encoder with "
        "apply_group_offloading(text_encoder, offload_type='block_level', num_blocks_per_group=4)"
    )
    out = numbers_in_notes(notes, {})
    assert out["group_offload_blocks"] == 2 and out["group_offload_stream"] is True
