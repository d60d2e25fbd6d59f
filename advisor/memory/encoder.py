"""Encoder-only vision models (SAM's image encoder, ViT, CLIP/SigLIP vision towers, DINOv2)
at inference: one forward pass over a fixed grid of patch tokens, no KV cache, no logits
over a vocabulary. The peak is the weights plus one block's live buffers for the whole
batch (earlier blocks' outputs are freed under no_grad), and the attention scores when the
attention is eager.

Tokens per image: the model's patch grid at its native resolution (`max_context_tokens`
in the catalog's arch: SAM 64x64 = 4096 at 1024 px, ViT-B/16 and CLIP ViT-L/14 at 224 px
197 and 257): their processors resize every input to it (SamProcessor longest side 1024,
CLIPImageProcessor / ViTImageProcessor crop 224), so the image size given does not change
the count.
"""

from __future__ import annotations

import tomllib
from functools import cache

from advisor.catalog import DATA_DIR, ModelSpec
from advisor.memory.band import band
from advisor.memory.runtimes import coefficient
from advisor.memory.terms import Breakdown, finish
from advisor.memory.transformer import mlp_width
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention, Runtime
from advisor.models.estimate import Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

# Families whose catalog entries are image encoders (no decoder, no KV cache).
VISION_ENCODER_FAMILIES = {"sam", "vit", "clip", "siglip", "dinov2"}


def is_vision_encoder(spec: ModelSpec | None) -> bool:
    return spec is not None and spec.family in VISION_ENCODER_FAMILIES and spec.arch is not None


@cache
def reference_attention() -> dict:
    with (DATA_DIR / "vision_encoders.toml").open("rb") as fh:
        return tomllib.load(fh)["reference_attention"]


def training_grid_tokens(spec: ModelSpec | None, w: Workload) -> int | None:
    """Tokens per image of a patch encoder trained at the size the user named (timm's
    img_size, transformers' interpolate_pos_encoding): the patch grid at that size plus the
    native grid's extra tokens (CLS, registers); None when no size or no patch is known.
    Inference keeps the processor's native grid (the module docstring)."""
    if not is_vision_encoder(spec) or spec is None or spec.arch is None:
        return None
    if not (spec.patch_size and spec.image_size) or not (w.image_width or w.image_height):
        return None
    width = w.image_width or w.image_height or spec.image_size
    height = w.image_height or width
    patch = spec.patch_size
    extra = spec.arch.max_context_tokens - (spec.image_size // spec.patch_size) ** 2
    if (w.framework or "").lower() in reference_attention()["frameworks"]:
        # DINOv2's own code builds only its patch-14 backbones (hub/backbones.py), with CLS
        # and up to 4 registers: a ViT it runs is one of them
        patch, extra = (
            reference_attention()["hub_patch_size"],
            reference_attention()["hub_extra_tokens"],
        )
    return -(-width // patch) * -(-height // patch) + max(extra, 0)


@cache
def _rel_pos() -> dict:
    with (DATA_DIR / "vision_encoders.toml").open("rb") as fh:
        return tomllib.load(fh)["decomposed_rel_pos"]


def runs_dinov2_code(w: Workload, spec: ModelSpec | None) -> bool:
    """A ViT run by DINOv2's own code (torch.hub): a DINOv2 model asked under no stack, or any
    vision encoder under the named `dinov2` stack; not when transformers / timm run it
    (data/vision_encoders.toml [reference_attention]). That code has no image processor: it
    runs over the size it is given."""
    if not is_vision_encoder(spec) or spec is None:
        return False
    table = reference_attention()
    framework = (w.framework or "").lower()
    if framework in table["frameworks"]:
        return True
    return spec.family in table["families"] and framework not in table["sdpa_frameworks"]


def dinov2_reference_eager(w: Workload, spec: ModelSpec | None) -> bool:
    """DINOv2's own code without xFormers: its MemEffAttention falls back to
    Attention.forward, q @ k^T and softmax by hand; not when an attention is named
    (`xformers` is read as a flash kernel)."""
    return w.attention is None and runs_dinov2_code(w, spec)


def reference_score_bytes(
    w: Workload, spec: ModelSpec | None, fmt: str, compute: str
) -> float | None:
    """Bytes a score one block of DINOv2's reference attention keeps for backward (its
    softmax output: fp32 4, autocast 6 with the matmul's fp16 cast, pure 16-bit 2); None
    where that code does not run."""
    if not dinov2_reference_eager(w, spec):
        return None
    table = reference_attention()
    if compute == "fp32":
        return float(table["score_bytes_fp32"])
    # autocast over fp32 weights (AMP) or 16-bit weights throughout
    return float(table["score_bytes_amp" if fmt == "fp32" else "score_bytes_16bit"])


def eager_by_default(w: Workload, spec: ModelSpec | None) -> bool:
    """An encoder with a decomposed relative-position term (SAM) run as its own package runs
    it (segment-anything's Attention.forward: matmul, the rel-pos sums, softmax by hand):
    eager attention unless the run names transformers or an attention kernel
    (data/vision_encoders.toml [decomposed_rel_pos] sdpa_frameworks); DINOv2's own code
    likewise ([reference_attention])."""
    if dinov2_reference_eager(w, spec):
        return True
    table = _rel_pos()
    if w.attention is not None or spec is None or spec.family not in table["families"]:
        return False
    return (w.framework or "").lower() not in table["sdpa_frameworks"]


def reference_eager_label(w: Workload, spec: ModelSpec | None) -> str:
    """The assumption said for a reference implementation's eager attention."""
    return "dinov2_reference_eager" if dinov2_reference_eager(w, spec) else "sam_reference_eager"


def attention_score_bytes(
    spec: ModelSpec | None,
    attention: Attention,
    batch: int,
    heads: int,
    tokens: int,
    elem: int,
    model_dtype_softmax: bool = False,
) -> tuple[float, str]:
    """(bytes, what) one global-attention block holds beyond its q/k/v for the batch.

    Eager: the q @ k^T scores and their fp32 softmax (transformers' eager attention; in the
    model's dtype where its code calls `attn.softmax(dim=-1)` on the scores as they are,
    `model_dtype_softmax`: DINOv2's Attention.forward), or,
    for an encoder with a decomposed relative-position term (SAM), the scores and the two
    sums that add rel_h and rel_w, whichever is larger. SDPA: nothing for a plain encoder
    (the fused kernel holds no score matrix), one score-sized bias for SAM, passed as the
    attention mask (data/vision_encoders.toml [decomposed_rel_pos]).
    """
    table = _rel_pos()
    rel_pos = spec is not None and spec.family in table["families"]
    per_score = batch * heads * tokens * tokens
    if attention == Attention.eager:
        per_elem = 2 * elem if model_dtype_softmax else elem + 4
        if rel_pos:
            per_elem = max(per_elem, table["eager_score_copies"] * elem)
        return per_score * per_elem, "eager attention scores"
    if attention == Attention.sdpa and rel_pos:
        return per_score * table[
            "sdpa_bias_copies"
        ] * elem, "relative-position bias as the SDPA mask"
    return 0.0, ""


def estimate_encoder(
    w: Workload,
    model: ResolvedModel,
    spec: ModelSpec | None,
    acc: Breakdown,
    arch: Architecture,
    fmt: str,
    weight_bytes: int,
    weight_formula: str,
    split: int,
) -> Estimate:
    """Weights + batch x tokens x one block's buffers (+ eager attention scores)."""
    batch = (w.batch_size or 1) * (w.images_per_prompt or 1)
    if w.batch_size is None and w.images_per_prompt is None:
        acc.assume("images", 1)
    # assumed (and said) by the caller
    attention = w.attention or (Attention.eager if eager_by_default(w, spec) else Attention.sdpa)
    tokens = arch.max_context_tokens
    if runs_dinov2_code(w, spec):
        # no processor resizes the input: the asked size's patch grid (hub: 518 px, 1374)
        tokens = training_grid_tokens(spec, w) or tokens
    elem = 4 if fmt == "fp32" else 2
    allocated = acc.add(
        "weights",
        weight_bytes / split,
        weight_formula,
        key="weights",
        params_b=round(model.params_b, 3),
        bits=round(weight_bytes * 8 / max(model.params_b * 1e9, 1), 2),
        format=fmt,
        cards=split,
    )
    # One block's live tensors, as in transformers' prefill (data/runtimes.toml
    # [transformers] prefill_hidden_buffers / prefill_mlp_buffers: residual, norm output and
    # attention output of width hidden; the MLP's up projection, its activation and the
    # next op's input of width intermediate).
    per_token = (
        coefficient("transformers", "prefill_hidden_buffers") * arch.hidden
        + coefficient("transformers", "prefill_mlp_buffers") * mlp_width(arch)
    ) * elem
    allocated += acc.add(
        "activations",
        batch * tokens * per_token,
        f"encoder pass: {batch} images x {tokens} patch tokens x {per_token / 1024:.0f} KiB",
        key="activations.prefill",
        tokens=batch * tokens,
        kib_per_token=round(per_token / 1024, 1),
        vocab=0,
    )
    scores, what = attention_score_bytes(
        spec, attention, batch, arch.heads, tokens, elem, runs_dinov2_code(w, spec)
    )
    if scores:
        allocated += acc.add(
            "attention_scores",
            scores,
            f"{what}: {batch} images x {arch.heads} heads x {tokens}^2",
            key="attention_scores.rel_pos_bias"
            if attention == Attention.sdpa
            else "attention_scores.eager",
            images=batch,
            heads=arch.heads,
            tokens=tokens,
        )
    est = finish(acc, allocated, w, False, band(model, spec, False, w.arch is not None))
    est.runtime = Runtime.transformers
    est.kv_bytes_per_token = 0
    est.non_kv_bytes = est.total_bytes
    return est
