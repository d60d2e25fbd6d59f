"""SAM's image encoder: the decomposed relative-position term in its global blocks.

Hand counts from segment-anything's modeling/image_encoder.py (add_decomposed_rel_pos: the
scores, scores + rel_h and that + rel_w alive at once) and segment-anything-fast's SDPA step
(`attn_bias = (rel_h + rel_w).view(B, heads, N, N)` passed as attn_mask); ViT-H: 16 heads,
a 64 x 64 = 4096-token grid at 1024 px (data/vision_encoders.toml).
"""

from advisor.memory import estimate
from advisor.models.workload import Workload

GIB = 2**30


def _term(r, name: str) -> float:
    return sum(t.bytes for t in r.estimate.terms if t.name == name) / GIB


def test_sam_eager_attention_holds_three_score_matrices_in_the_model_dtype():
    r = estimate(
        Workload(model="sam-vit-h", batch_size=8, weights_format="fp32", attention="eager")
    )
    # 8 images x 16 heads x 4096^2 x 4 B x 3 copies = 24 GiB (the old count: 8 B per score,
    # q @ k^T + an fp32 softmax, 16 GiB, left fp32 runs at batch 8 26% short)
    assert abs(_term(r, "attention_scores") - 8 * 16 * 4096**2 * 4 * 3 / GIB) < 0.01


def test_sam_under_sdpa_materialises_the_relative_position_bias_as_the_mask():
    r = estimate(
        Workload(model="sam-vit-h", batch_size=32, weights_format="bf16", attention="sdpa")
    )
    # 32 x 16 x 4096^2 x 2 B = 16 GiB: the fused kernel holds no scores, but the mask is full
    assert abs(_term(r, "attention_scores") - 16.0) < 0.01
    assert r.estimate.allocated_bytes / GIB > 16 + 1.18  # bias + bf16 weights at least


def test_a_kernel_that_adds_the_relative_position_inside_needs_no_bias():
    flash = estimate(
        Workload(model="sam-vit-h", batch_size=32, weights_format="bf16", attention="flash")
    )
    assert _term(flash, "attention_scores") == 0


def test_an_encoder_without_relative_positions_keeps_no_bias_under_sdpa():
    r = estimate(Workload(model="clip-vit-l-14", batch_size=64, attention="sdpa"))
    assert _term(r, "attention_scores") == 0


def test_sam_vit_b_is_the_catalogs_vit_b_encoder_not_the_cnn_fallback():
    # segment-anything build_sam_vit_b: 768 wide, 12 blocks, 12 heads over the same 4096-token
    # grid; before its entry 'sam-vit-b' fell to the CNN parameter fit with no attention term
    r = estimate(Workload(model="sam-vit-b", attention="eager"))
    assert r.model.id == "sam-vit-b" and r.model.from_catalog
    # one image x 12 heads x 4096^2 x 4 B (fp32 as build_sam loads it) x 3 copies = 2.25 GiB
    assert abs(_term(r, "attention_scores") - 12 * 4096**2 * 4 * 3 / GIB) < 0.01


def test_sam_without_a_named_stack_runs_segment_anythings_eager_attention():
    # segment-anything's Attention.forward: q @ k^T, the rel-pos sums and the softmax by hand
    r = estimate(Workload(model="sam-vit-h", batch_size=1))
    assert abs(_term(r, "attention_scores") - 16 * 4096**2 * 4 * 3 / GIB) < 0.01
    # transformers' SamModel picks SDPA: one bias-sized mask
    r = estimate(Workload(model="sam-vit-h", batch_size=1, framework="transformers"))
    assert abs(_term(r, "attention_scores") - 16 * 4096**2 * 4 / GIB) < 0.01
