"""Video pipelines under offload: the peak is the larger stage (denoising or decoding), and
the 3D VAE's decode working set follows each VAE's diffusers code (advisor/memory/video.py,
data/models/video.toml)."""

from __future__ import annotations

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.memory.diffusion import denoiser_activations
from advisor.memory.video import causal_mask_bytes, decode_working_set, geometry
from advisor.models.choices import Offload
from advisor.models.workload import Workload

GIB = 2**30
WAN_480P = dict(image_width=832, image_height=480, video_frames=81)


def terms(**kw: object) -> dict[str, object]:
    est = estimate(Workload(**kw)).estimate
    assert est is not None
    return {t.name: t for t in est.terms}


def test_wan_14b_480p_under_group_offload_peaks_at_the_vae_decode_stage() -> None:
    """Leaf-level group offloading streams the 14B transformer, so its stage holds a leaf
    and one CFG pass's activations; the decode stage holds the fp32 Wan-VAE and its
    chunked decode with the causal-conv caches, and is the larger."""
    t = terms(model="wan2.1-t2v-14b", cpu_offload=Offload.sequential, **WAN_480P)
    assert set(t) >= {"vae", "vae_decode"} and "activations" not in t
    assert t["vae"].formula_key == "vae.sequential_offload"
    assert "peak stage" in t["vae"].formula
    # fp32: 0.127B x 4 B
    assert abs(t["vae"].bytes - 0.127e9 * 4) < 1e6
    decode = t["vae_decode"]
    assert decode.values["bytes_per_value"] == 4 and decode.values["at_once"] == 4
    assert decode.values["cache_gib"] > 3  # 2 frames x 1182 channels x 832x480 x 4 B
    assert 6 * GIB < decode.bytes < 9 * GIB


def test_vae_tiling_moves_the_wan_peak_back_to_the_denoising_stage() -> None:
    plain = estimate(
        Workload(model="wan2.1-t2v-14b", cpu_offload=Offload.sequential, **WAN_480P)
    ).estimate
    tiled_est = estimate(
        Workload(
            model="wan2.1-t2v-14b", cpu_offload=Offload.sequential, vae_tiling=True, **WAN_480P
        )
    ).estimate
    assert tiled_est.allocated_bytes < plain.allocated_bytes
    tiled = {t.name for t in tiled_est.terms}
    assert "activations" in tiled and "vae_decode" not in tiled


def activations(model: str, **kw: object) -> tuple[float, dict]:
    spec = find_model(model)
    assert spec is not None
    act, _, values = denoiser_activations(
        Workload(model=model, **kw), spec, "bf16", 1, 81, 832, 480
    )
    return act, values


def test_wan_runs_cfg_as_two_calls_so_one_batch_of_activations_is_alive() -> None:
    on, on_values = activations("wan2.1-t2v-14b")
    off, _ = activations("wan2.1-t2v-14b", guidance=False)
    assert on_values["batch"] == 1 and on == off
    _, ltx = activations("ltx-video")
    assert ltx["batch"] == 2  # LTXPipeline concatenates cond + uncond into one batch


def test_wan_is_found_by_its_diffusers_repo_name() -> None:
    spec = find_model("Wan-AI/Wan2.1-T2V-14B-Diffusers")
    assert spec is not None and spec.id == "wan2.1-t2v-14b"


def test_wan_1_3b_with_model_offload_peaks_at_decode_and_tiling_lowers_it() -> None:
    """Wan's --offload_model moves the DiT off before the VAE decode, as
    enable_model_cpu_offload does: the 1.3B transformer stage is smaller than the decode."""
    kw = dict(model="wan2.1-t2v-1.3b", cpu_offload=Offload.model, text_encoders_on_gpu=False)
    t = terms(**kw, **WAN_480P)
    assert t["vae"].formula_key == "vae.model_offload" and "vae_decode" in t
    plain = estimate(Workload(**kw, **WAN_480P)).estimate.allocated_bytes
    tiled = estimate(Workload(**kw, vae_tiling=True, **WAN_480P)).estimate.allocated_bytes
    assert tiled < 0.8 * plain


def test_wan_decode_does_not_grow_with_frames_beyond_the_decoded_video() -> None:
    g = geometry("wan2.1-t2v-14b")
    assert g is not None
    short = decode_working_set(g, 17, 832, 480, 4, 5, tiling=False)
    long = decode_working_set(g, 161, 832, 480, 4, 5, tiling=False)
    assert long.bytes - short.bytes == long.output_bytes - short.output_bytes


def test_ltx_tiles_are_512_so_tiling_barely_helps_at_768x512() -> None:
    g = geometry("ltx-video")
    assert g is not None
    plain = decode_working_set(g, 161, 768, 512, 2, 5, tiling=False)
    tiled = decode_working_set(g, 161, 768, 512, 2, 5, tiling=True)
    # one 512x512 tile of a 768x512 frame: 2/3 of the maps, the decoded video unchanged
    maps = plain.bytes - plain.output_bytes
    assert abs((tiled.bytes - tiled.output_bytes) - maps * 2 / 3) < 1e6


def test_hunyuanvideo_mid_block_mask_is_dense_in_the_tile_tokens() -> None:
    # 5 latent frames of a 1280x720 tile: 5 x 90 x 160 tokens; fp32 where + bf16 copy.
    tokens = 5 * 90 * 160
    assert causal_mask_bytes(tokens, 2) == tokens**2 * 6
    g = geometry("hunyuanvideo")
    assert g is not None
    full = decode_working_set(g, 129, 1280, 720, 2, 9, tiling=False)
    tiled = decode_working_set(g, 129, 1280, 720, 2, 9, tiling=True)
    assert full.mask_bytes > 25 * GIB and tiled.mask_bytes < 0.2 * GIB


def test_a_video_answer_assumes_one_video_not_one_image() -> None:
    """A video model's answer said "1 image(s) per prompt" beside "81 video frames"."""
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    for q, lang, said, unsaid in (
        ("wan2.1 14b 480p 4090", "en", "1 video(s) per prompt", "image(s) per prompt"),
        ("wan2.1 14b 480p 4090", "zh", "每次生成 1 段视频", "每次出图"),
        ("sdxl 4090", "en", "1 image(s) per prompt", "video(s) per prompt"),
    ):
        parsed = parse_query(q)
        text = render(
            "answer", lang, rec=recommend_query(parsed), parsed=parsed, canonical=q, plain=True
        )
        assert said in text and unsaid not in text, (q, lang)
