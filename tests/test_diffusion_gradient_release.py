"""The optimizer step in the backward for a diffusion denoiser (diffusion-pipe's
gradient_release, train.py get_optimizer: a post-accumulate-grad hook per parameter steps its
own optimizer and zeroes the gradient): one block's gradients at a time."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.choices import Kind
from advisor.models.workload import Workload


def _terms(released: bool) -> dict:
    w = Workload(
        kind=Kind.diffusion,
        model="flux.1-dev",
        mode="full",
        weights_format="bf16",
        optimizer="adamw_8bit",
        image_width=1024,
        image_height=1024,
        gradient_checkpointing=True,
        latents_cached=True,
        optimizer_in_backward=released,
    )
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t for t in est.terms}


def test_gradient_release_keeps_one_blocks_gradients_with_its_own_label() -> None:
    whole, released = _terms(False), _terms(True)
    assert released["gradients"].formula_key == "gradients.released"
    # FLUX.1-dev's 57 blocks: the 11.9B DiT's gradients become one block's
    ratio = released["gradients"].bytes / whole["gradients"].bytes
    assert abs(ratio - 1 / 57) < 1e-3
    assert released["optimizer"].bytes == whole["optimizer"].bytes
