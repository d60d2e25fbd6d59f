"""A video decoded frame by frame (lvdm's perframe_ae=True, Doubiiu/DynamiCrafter
lvdm/models/ddpm3d.py decode_core: one latent frame through first_stage_model.decode at a
time; data/models/video.toml [per_frame_decode])."""

from __future__ import annotations

import tomllib
from pathlib import Path

from advisor.memory import estimate, video
from advisor.memory.diffusion import decode_key
from advisor.models.choices import Kind
from advisor.models.workload import Workload
from advisor.parse import parse_query

ROOT = Path(__file__).resolve().parent.parent


def test_the_per_frame_decode_puts_one_frame_through_the_decoder() -> None:
    """The source's loop: z[index:index+1], one frame per decode call."""
    assert video.per_frame_decode_frames() == 1
    geo = video.geometry("generic-video-dit")
    assert geo is not None
    batched = video.decode_working_set(geo, 16, 1024, 576, 2, 18, tiling=False)
    one = video.decode_working_set(geo, 16, 1024, 576, 2, 18, tiling=False, per_frame=True)
    assert batched.at_once == geo.decode_frames and one.at_once == 1
    # the last stage's maps shrink with the frames at once; the decoded frames stay
    stage = batched.bytes - batched.output_bytes - batched.cache_bytes
    assert one.output_bytes == batched.output_bytes
    assert one.bytes - one.output_bytes - one.cache_bytes == stage / geo.decode_frames


def _total(**knobs: object) -> int:
    w = Workload(
        kind=Kind.diffusion,
        model="cogvideox-5b",
        video_frames=49,
        image_width=720,
        image_height=480,
        **knobs,
    )
    est = estimate(w).estimate
    assert est is not None
    return est.total_bytes


def test_a_per_frame_decode_is_its_own_labelled_term_in_both_languages() -> None:
    """CogVideoX-5B's batched decode is its peak (12 GiB); frame by frame it is not."""
    assert _total(vae_per_frame=True) < _total()
    w = Workload(kind=Kind.diffusion, model="cogvideox-5b", vae_per_frame=True)
    assert decode_key(w, video_vae=True) == "vae_decode.video_per_frame"
    assert decode_key(w.model_copy(update={"vae_per_frame": False}), True) == "vae_decode.video"
    for lang in ("en", "zh"):
        with (ROOT / "templates" / lang / "formulas.toml").open("rb") as fh:
            assert "vae_decode.video_per_frame" in tomllib.load(fh)["formula"]


def test_a_user_naming_perframe_ae_gets_the_same_reading() -> None:
    for text in ("cogvideox 5b 49 frames perframe_ae", "cogvideox 5b 49帧 逐帧解码"):
        p = parse_query(text)
        assert p.ok and p.workload.vae_per_frame, text


def test_xformers_is_read_as_attention_that_never_holds_the_scores() -> None:
    """xformers' memory_efficient_attention tiles the scores as FlashAttention does: a
    user's 'xformers' and a case's 'xformers memory_efficient_attention' read as flash."""
    from checks.cases import ATTENTION_WORDS, _first

    p = parse_query("sd 1.5 dreambooth full fine-tune 512 xformers on t4")
    assert p.ok and p.workload.attention is not None
    assert p.workload.attention.value == "flash"
    assert _first(ATTENTION_WORDS, "xformers memory_efficient_attention") == "flash"
