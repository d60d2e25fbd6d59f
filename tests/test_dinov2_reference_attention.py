"""DINOv2 run by its own code (torch.hub, no xFormers): every block's attention falls back to
Attention.forward, q @ k^T and softmax by hand, and keeps one full score matrix for backward.

Hand counts from facebookresearch/dinov2 dinov2/layers/attention.py (05c66df): the softmax
output is saved by softmax's backward and by `attn @ v`; `attn_drop` is nn.Dropout(0.0),
which returns its input. 4 B a score in fp32, 6 B under autocast (fp32 softmax + the
matmul's fp16 cast), 2 B in pure 16-bit (data/vision_encoders.toml [reference_attention]).
"""

from __future__ import annotations

import pytest

from advisor.memory import encoder, estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

GIB = 2**30


def _term(r, name: str) -> int:
    return sum(t.bytes for t in r.estimate.terms if t.name == name)


def _train(**kw) -> Workload:
    base = dict(
        kind="classic",
        model="dinov2-vitb14",
        mode="full",
        batch_size=8,
        image_width=518,
        image_height=518,
        optimizer="adamw",
    )
    return Workload(**{**base, **kw})


# ViT-B/14 at 518 px: 37 x 37 patches + CLS + 4 registers
TOKENS = 37 * 37 + 5


def test_the_reference_code_keeps_one_fp32_score_matrix_a_block():
    r = estimate(_train(weights_format="fp32", compute_dtype="fp32"))
    # 12 blocks x 8 images x 12 heads x 1374^2 scores x 4 B = 8.1 GiB
    assert _term(r, "reference_scores") == pytest.approx(12 * 8 * 12 * TOKENS**2 * 4, rel=1e-6)
    assert "attention = dinov2_reference_eager" in r.assumptions


def test_under_autocast_the_softmax_stays_fp32_and_the_matmul_saves_an_fp16_copy():
    r = estimate(_train(weights_format="fp32", compute_dtype="fp16", mixed_precision=True))
    assert _term(r, "reference_scores") == pytest.approx(12 * 8 * 12 * TOKENS**2 * 6, rel=1e-6)


def test_the_table_holds_the_bytes_read_from_the_code():
    table = encoder.reference_attention()
    assert (table["score_bytes_fp32"], table["score_bytes_amp"], table["score_bytes_16bit"]) == (
        4,
        6,
        2,
    )
    assert "05c66df" in table["source"]


@pytest.mark.parametrize(
    "kw",
    [
        {"framework": "transformers"},  # Dinov2Model picks SDPA
        {"framework": "timm"},  # vit_base_patch14_dinov2: fused attention
        {"attention": "flash"},  # xFormers installed (read as a flash kernel)
    ],
)
def test_transformers_timm_or_xformers_keep_no_score_matrix(kw):
    r = estimate(_train(weights_format="fp32", compute_dtype="fp32", **kw))
    assert _term(r, "reference_scores") == 0


def test_a_vit_under_the_dinov2_code_is_its_patch_14_backbone():
    r = estimate(
        Workload(
            kind="classic",
            model="vit-base",
            mode="full",
            batch_size=8,
            image_width=512,
            image_height=512,
            weights_format="fp32",
            compute_dtype="fp32",
            framework="dinov2",
        )
    )
    # the hub builds only patch-14 backbones (hub/backbones.py): 37 x 37 at 512 px + CLS and
    # 4 registers, not ViT-B/16's 32 x 32 + CLS
    assert _term(r, "reference_scores") == pytest.approx(12 * 8 * 12 * TOKENS**2 * 4, rel=1e-6)
    assert "seq_len = 1374" in r.assumptions


def test_gradient_checkpointing_keeps_the_scores_of_the_block_recomputed():
    r = estimate(_train(weights_format="fp32", compute_dtype="fp32", gradient_checkpointing=True))
    assert _term(r, "reference_scores") == pytest.approx(8 * 12 * TOKENS**2 * 4, rel=1e-6)


def test_the_catalog_knows_the_hub_models():
    for name, size in [
        ("dinov2_vits14", "dinov2-vits14"),
        ("facebook/dinov2-base", "dinov2-vitb14"),
        ("dinov2_vitl14_reg", "dinov2-vitl14"),
        ("dinov2_vitg14", "dinov2-vitg14"),
        # the patch written after a slash names DINOv2's model, not CLIP's ViT-L/14
        ("DINOv2 ViT-L/14", "dinov2-vitl14"),
        ("dinov2 vitl14", "dinov2-vitl14"),
        ("clip ViT-L/14", "clip-vit-l-14"),
    ]:
        assert parse_query(f"fine-tune {name} batch 8").workload.model == size


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_answer_says_the_attention_it_assumes(lang: str):
    q = "fine-tune dinov2 vitb14 at 518x518 batch 8 fp32"
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, canonical=q, view="full", plain=True)
    assert "xFormers" in text
    assert ("DINOv2" in text) and (("分数矩阵" in text) if lang == "zh" else ("eager" in text))


def test_hub_inference_runs_over_the_size_it_is_given_with_its_softmax_in_the_model_dtype():
    # no image processor in the hub code: 518 px is 37 x 37 + 5 tokens; `attn.softmax` on the
    # bf16 scores gives bf16: the scores and their softmax, 2 + 2 B, one block at a time
    hub = estimate(Workload(kind="classic", model="dinov2-vitl14", batch_size=32, image_width=518))
    assert _term(hub, "attention_scores") == pytest.approx(32 * 16 * TOKENS**2 * 4, rel=1e-6)
    # transformers' processor crops 224 px (16 x 16 + 5) and its SDPA keeps no scores
    hf = estimate(
        Workload(
            kind="classic",
            model="dinov2-vitl14",
            batch_size=32,
            image_width=518,
            framework="transformers",
        )
    )
    assert _term(hf, "attention_scores") == 0
