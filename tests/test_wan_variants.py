"""Wan variants people run on the Wan2.1 14B / 1.3B DiT are catalog models with their own
modules counted (data/models/video_wan.toml): VACE's context blocks (8 on the 14B, 15 on
the 1.3B) and the hints they hand the DiT, Animate's face adapters and motion encoders.
Block swap counts the VACE blocks as units beside the DiT's, as the wrapper's BlockSwap
does, and a question naming them is answered for them, not for another Wan model."""

from __future__ import annotations

import pytest

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.memory.diffusion_components import denoiser_activations
from advisor.models.workload import Workload
from advisor.parse import parse_query
from tests.conftest import plain_answer

VACE_480P = dict(image_width=832, image_height=480, video_frames=81)
TOKENS_480P = 21 * (480 // 16) * (832 // 16)  # 81 frames -> 21 latent frames, 8x VAE, 2x2 patch


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        ("wan vace 14b 480p 81帧 4090", "wan2.1-vace-14b"),
        ("Wan-AI/Wan2.1-VACE-1.3B on a 4060 8gb", "wan2.1-vace-1.3b"),
        ("wan2.2 animate 14b 720p 4090", "wan2.2-animate-14b"),
        ("Wan-AI/Wan2.2-Animate-14B 1280x720", "wan2.2-animate-14b"),
    ],
)
def test_the_variant_named_is_the_model_sized(typed: str, model_id: str) -> None:
    assert parse_query(typed).workload.model == model_id


def test_vace_adds_its_context_blocks_to_the_t2v_dit() -> None:
    base = find_model("wan2.1-t2v-14b")
    vace = find_model("wan2.1-vace-14b")
    small = find_model("wan2.1-vace-1.3b")
    assert base and vace and small and base.diffusion and vace.diffusion and small.diffusion
    # 8 VACE blocks of 377.5M (a Wan block + after_proj) over the T2V-14B's 14.29B
    assert vace.diffusion.denoiser_params_b == pytest.approx(14.29 + 3.05, abs=0.01)
    assert (vace.diffusion.blocks, vace.diffusion.swap_units) == (40, 48)
    assert (small.diffusion.blocks, small.diffusion.swap_units) == (30, 45)


def test_vace_hints_are_held_per_latent_token() -> None:
    vace = find_model("wan2.1-vace-14b")
    base = find_model("wan2.1-t2v-14b")
    assert vace is not None and base is not None
    w = Workload(model="wan2.1-vace-14b", **VACE_480P)  # type: ignore[arg-type]
    act, _, values = denoiser_activations(w, vace, "bf16", 1, 81, 832, 480)
    base_act, _, _ = denoiser_activations(w, base, "bf16", 1, 81, 832, 480)
    assert values["hints"] == 8
    # 8 hints x 5120 x 2 B (bf16) for every latent token
    assert act - base_act == pytest.approx(8 * 5120 * 2 * TOKENS_480P, rel=1e-6)


def test_block_swap_moves_vace_blocks_too() -> None:
    w = Workload(model="wan2.1-vace-14b", weights_format="fp8", blocks_to_swap=15, **VACE_480P)  # type: ignore[arg-type]
    est = estimate(w).estimate
    assert est is not None
    weights = {t.name: t for t in est.terms}["weights"]
    assert weights.formula_key == "weights.block_swap"
    assert (weights.values["swapped"], weights.values["units"]) == (15, 48)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_answers_name_the_variant(lang: str) -> None:
    vace = plain_answer("wan vace 14b 480p 81 frames 4090", lang)
    assert "Wan2.1-VACE-14B" in vace
    animate = plain_answer("wan2.2 animate 14b 720p on a 4090", lang)
    assert "Wan2.2-Animate-14B" in animate
    assert "Wan2.2-T2V-A14B" not in animate
    # "animate" is read as the model's name, not left unread
    unread = [line for line in animate.splitlines() if "ignored" in line or "已忽略" in line]
    assert not any("animate" in line for line in unread)


def test_s2v_is_the_14b_dit_with_its_audio_layers() -> None:
    # Wan-Video/Wan2.2 @42bf4cf wan/configs/wan_s2v_14B.py and wan/modules/s2v/: the
    # T2V-14B DiT (14.29B) + 12 audio cross-attentions (105M) and AdaLayerNorms (52M) +
    # the causal audio encoder (0.095B) + FramePack's motion convs (0.024B)
    s2v = find_model("wan2.2-s2v-14b")
    assert s2v is not None
    assert s2v.diffusion is not None
    assert s2v.diffusion.denoiser_params_b == pytest.approx(14.29 + 12 * 0.157 + 0.12, abs=0.02)
    assert s2v.diffusion.text_encoders_params_b == [5.68]  # no CLIP: the VAE encodes the image
    assert s2v.params_b == pytest.approx(16.30 + 5.68 + 0.127, abs=0.01)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_s2v_is_read_and_sized(lang: str) -> None:
    q = "wan2.2 s2v 14b 4090 能跑吗" if lang == "zh" else "wan2.2 s2v 14b on a 4090, will it run?"
    parsed = parse_query(q)
    assert parsed.workload is not None and parsed.workload.model == "wan2.2-s2v-14b"
    text = plain_answer(q, lang)
    assert "Wan2.2-S2V-14B" in text and "Wan2.2-T2V-A14B" not in text
    unread = [line for line in text.splitlines() if "ignored" in line or "已忽略" in line]
    assert not any("s2v" in line for line in unread)
