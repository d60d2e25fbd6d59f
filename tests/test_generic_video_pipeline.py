"""A video diffusion model the catalog does not name, asked with frames: the pipeline the
catalog's video DiTs share (data/models/video.toml [generic_video]), not its denoiser alone."""

from __future__ import annotations

import math

import pytest

from advisor import catalog
from advisor.memory import estimate, video
from advisor.memory.video_generic import (
    GENERIC_VIDEO_ID,
    bytes_per_token_per_sqrt_b,
    generic_video_spec,
)
from advisor.models.choices import Kind, Offload
from advisor.models.workload import Workload
from advisor.parse import parse_query

GIB = 2**30
T5_XXL_ENCODER_B = 4.76  # genmo/mochi-1-preview text_encoder/config.json: T5EncoderModel 4096 x 24


def _video(**kw) -> Workload:
    base = dict(kind=Kind.diffusion, params_b=5.0, weights_format="bf16")
    base.update(kw)
    return Workload(**base)


def test_the_unnamed_video_dit_loads_the_t5_xxl_encoder_and_the_3d_vae():
    spec = generic_video_spec(5.0)
    d = spec.diffusion
    assert d is not None
    assert d.text_encoders_params_b == [T5_XXL_ENCODER_B]
    assert d.vae_params_b == catalog.find_model("cogvideox-5b").diffusion.vae_params_b
    geo = video.geometry(GENERIC_VIDEO_ID)
    assert geo is not None and (geo.temporal, geo.spatial, geo.patch) == (4, 8, 2)


def test_its_working_set_per_token_is_the_largest_the_catalogs_video_dits_relate_to_size():
    # Cosmos-Predict1-7B: 147,456 B a token at 7.23B (hidden 4096 x 18 values x 2 B), above
    # LTX-Video's 73,728 B at 1.92B
    assert math.isclose(bytes_per_token_per_sqrt_b(), 147456 / math.sqrt(7.23))
    assert bytes_per_token_per_sqrt_b() > 73728 / math.sqrt(1.92)
    assert generic_video_spec(4.0).diffusion.denoiser_act_bytes_per_token == int(
        147456 / math.sqrt(7.23) * 2
    )


def test_frames_asked_of_an_unnamed_model_size_the_encoder_the_tokens_and_the_decode():
    r = estimate(_video(image_width=720, image_height=480, video_frames=49))
    names = {t.name for t in r.estimate.terms}
    assert {"weights", "text_encoders", "vae_decode"} <= names
    assert ("pipeline", "generic_video_dit") in [(a.field, a.value) for a in r.assumed]
    # without frames it stays the image DiT it was
    r_img = estimate(_video(image_width=720, image_height=480))
    assert ("pipeline", "generic_dit") in [(a.field, a.value) for a in r_img.assumed]
    assert r.estimate.allocated_bytes > r_img.estimate.allocated_bytes + 15 * GIB


def test_offload_modes_apply_to_every_component_of_the_guessed_pipeline():
    kw = dict(image_width=720, image_height=480, video_frames=49)
    resident = estimate(_video(**kw)).estimate.allocated_bytes
    model = estimate(_video(cpu_offload=Offload.model, **kw)).estimate.allocated_bytes
    seq = estimate(
        _video(cpu_offload=Offload.sequential, vae_slicing=True, vae_tiling=True, **kw)
    ).estimate.allocated_bytes
    assert resident > model > seq


def test_a_guessed_pipeline_widens_the_band():
    named = estimate(
        Workload(kind=Kind.diffusion, model="cogvideox-5b", image_width=720, image_height=480)
    ).estimate
    guessed = estimate(_video(image_width=720, image_height=480, video_frames=49)).estimate
    assert guessed.band_basis.guessed_architecture
    assert not named.band_basis.guessed_architecture
    assert guessed.band_high_fraction > named.band_high_fraction


def test_an_i2v_sibling_resolves_to_its_base_video_model():
    assert catalog.find_model("THUDM/CogVideoX-5b-I2V").id == "cogvideox-5b"
    assert catalog.find_model("llama-3-8b-i2v") is None  # only a diffusion base


def _answer(line: str, lang: str) -> str:
    from advisor.recommend import recommend_query
    from advisor.render import render

    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="USD" if lang == "en" else "CNY")
    return render("answer", lang, rec=rec, parsed=parsed, canonical=line, plain=True)


@pytest.mark.parametrize(
    ("line", "lang", "said", "not_said"),
    [
        (
            "Vchitect-2.0 14B text to video, 97 frames at 960x544, how much VRAM",
            "en",
            ["14B diffusion model", "a video DiT the catalog lacks", "T5-XXL"],
            ["Llama-like", "No VRAM formula"],
        ),
        (
            "vchitect-2.0 1.3b 文生视频 97帧 960x544 要多少显存",
            "zh",
            ["1.3B 扩散模型", "目录里没有的视频 DiT", "T5-XXL"],
            ["类 Llama", "没有显存公式"],
        ),
    ],
)
def test_a_video_generation_question_on_an_unnamed_model_is_sized_as_a_video_dit(
    line: str, lang: str, said: list, not_said: list
) -> None:
    w = parse_query(line).workload
    assert w.kind == Kind.diffusion and w.video_frames == 97
    text = _answer(line, lang)
    for s in said:
        assert s in text
    for s in not_said:
        assert s not in text


def test_transcoding_stays_a_video_processing_job():
    assert parse_query("视频转码用什么卡").workload.kind == Kind.video


def test_wan21_i2v_is_its_own_entry_with_the_image_cross_attention_and_encoder():
    i2v = catalog.find_model("Wan-AI/Wan2.1-I2V-14B-720P")
    t2v = catalog.find_model("Wan-AI/Wan2.1-T2V-14B")
    assert i2v.id == "wan2.1-i2v-14b" and t2v.id == "wan2.1-t2v-14b"
    assert catalog.find_model("Wan-AI/Wan2.1-I2V-14B-480P-Diffusers").id == i2v.id
    # the shards' 16.4B = the T2V's transformer + k_img / v_img (5120 x 5120) in 40 blocks
    extra = 2 * 5120 * 5120 * 40 / 1e9
    assert abs(i2v.diffusion.denoiser_params_b - t2v.diffusion.denoiser_params_b - extra) < 0.05
    assert i2v.diffusion.text_encoders_params_b == [5.68, 0.63]  # umT5-XXL, CLIP ViT-H/14
    assert i2v.diffusion.text_tokens == 512 + 257  # umT5 tokens + CLIP patches and CLS
    assert video.geometry(i2v.id) == video.geometry(t2v.id)
    assert parse_query("Wan2.1-I2V-14B-720P 4090").workload.model == i2v.id
