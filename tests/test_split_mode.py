"""kohya sd-scripts' FLUX --split_mode (flux_train_network.py prepare_split_model): the
DiT as FluxUpper (19 double blocks) and FluxLower (38 single blocks) that take turns on the
GPU; data/models.toml flux.1-dev split_parts_b."""

from __future__ import annotations

from advisor import catalog
from advisor.memory import estimate
from advisor.models.choices import Kind
from advisor.models.workload import Workload
from advisor.parse import parse_query


def test_the_two_parts_are_the_double_and_the_single_blocks() -> None:
    """19 x 339M double-stream and 38 x 141M single-stream blocks (the block sizes the
    catalog's block-swap note reads off FLUX.1-dev's config), the whole DiT between them."""
    spec = catalog.find_model("flux.1-dev")
    assert spec is not None and spec.diffusion is not None
    upper, lower = spec.diffusion.split_parts_b or []
    assert round(19 * 0.339, 2) == upper and round(38 * 0.141, 2) == lower
    assert abs(upper + lower - spec.diffusion.denoiser_params_b) / upper < 0.02


def _weights(split: bool) -> tuple[int, str | None]:
    w = Workload(
        kind=Kind.diffusion,
        model="flux.1-dev",
        mode="lora",
        weights_format="fp8",
        compute_dtype="bf16",
        image_width=512,
        image_height=512,
        lora_rank=4,
        gradient_checkpointing=True,
        latents_cached=True,
        split_mode=split,
    )
    est = estimate(w).estimate
    assert est is not None
    term = next(t for t in est.terms if t.name == "weights")
    return term.bytes, term.formula_key


def test_split_mode_keeps_the_larger_part_on_the_card_with_its_own_label() -> None:
    whole, key = _weights(False)
    half, split_key = _weights(True)
    assert key == "weights.denoiser_adapter" and split_key == "weights.denoiser_split"
    # the upper part, 6.44 of 11.80B, is the larger one
    assert abs(half / whole - 6.44 / 11.80) < 0.01


def test_a_user_naming_split_mode_gets_the_same_reading() -> None:
    p = parse_query("flux.1-dev lora training fp8 512 --split_mode adafactor on a 12gb card")
    assert p.ok and p.workload.split_mode
