"""Mochi 1 preview (genmo/mochi-1-preview) as diffusers runs it: the AsymmDiT counted from
transformer_mochi.py's block shapes, the 6x temporal / 8x spatial VAE and its decoder's
working set from autoencoder_kl_mochi.py, at diffusers 58eb52c (data/models/video_more.toml)."""

from advisor import catalog
from advisor.memory import estimate, video
from advisor.models.workload import Workload
from advisor.parse import parse_query

DIM, TEXT_DIM, BLOCKS = 24 * 128, 1536, 48


def _block(dim: int, text: int, context_ff: bool = True) -> int:
    ff = 3 * dim * ((4 * dim * 2) // 3)  # SwiGLU: two input projections and one output
    ff_text = 3 * text * ((4 * text * 2) // 3) if context_ff else 0
    attn = 4 * dim * dim + 3 * text * dim + dim * text  # to_q/k/v/out, add_q/k/v, to_add_out
    modulation = dim * 4 * dim + dim * 4 * text  # norm1 and norm1_context from the timestep
    return ff + ff_text + attn + modulation


def test_the_asymmdit_is_its_block_shapes():
    counted = (BLOCKS - 1) * _block(DIM, TEXT_DIM) + _block(DIM, TEXT_DIM, context_ff=False)
    spec = catalog.find_model("genmo/mochi-1-preview")
    assert spec is not None and spec.diffusion is not None
    # the blocks alone (embedders and the final layer are a few tens of millions more)
    assert 9.85 < counted / 1e9 < spec.diffusion.denoiser_params_b == 9.95
    assert spec.diffusion.inner_dim == DIM and spec.diffusion.blocks == BLOCKS


def test_every_name_reaches_the_entry():
    for name in ("mochi", "mochi 1", "mochi-1-preview", "Mochi 1 预览版"):
        spec = catalog.find_model(name)
        assert spec is not None and spec.id == "mochi-1-preview", name
    w = parse_query("mochi-1 diffusers cpu offload + vae tiling, L4 24GB").workload
    assert w is not None and w.model == "mochi-1-preview" and w.vae_tiling


def test_the_vae_compresses_time_6x():
    geo = video.geometry("mochi-1-preview")
    assert geo is not None and (geo.temporal, geo.spatial, geo.patch) == (6, 8, 2)
    # genmo's 163 frames at 848x480: 28 latent frames of 30 x 53 tokens
    assert video.transformer_tokens(geo, 163, 848, 480) == 28 * 30 * 53 == 44_520


def _run(**kw):
    w = Workload(model="mochi-1-preview", mode="inference", **kw)
    r = estimate(w)
    assert r.estimate is not None
    return {t.name: t for t in r.estimate.terms}


def test_tiling_cuts_the_all_frames_decode_to_256px_tiles():
    whole = _run(video_frames=85)["vae_decode"].bytes
    tiled = _run(video_frames=85, vae_tiling=True)["vae_decode"].bytes
    # every frame at 848x480 against 256 x 256 tiles over the same frames
    assert 5.5 < whole / tiled < 6.5


def test_model_offload_holds_the_bf16_dit_and_its_cfg_batch():
    terms = _run(cpu_offload="model", vae_tiling=True)
    assert round(terms["weights"].bytes / 2**30, 1) == 18.5  # 9.95B x 2 B
    act = terms["activations"]
    assert act.values["batch"] == 2  # torch.cat([latents] * 2)
    assert act.values["tokens"] == 15 * 30 * 53 + 256  # 85 frames, max_sequence_length 256


def test_the_sequential_offload_recipe_says_the_tiled_decode_it_is_sized_with():
    # the rung sets vae_tiling (data/small_card_recipes.toml): Mochi's untiled 85-frame
    # decode alone would not fit a 24 GB card, so the answer must name both switches
    from tests.conftest import plain_answer

    en = plain_answer("mochi 1 preview 4090", "en")
    assert "enable_sequential_cpu_offload" in en and "enable_vae_tiling" in en
    zh = plain_answer("mochi 1 preview 4090", "zh")
    assert "「enable_sequential_cpu_offload」" in zh and "「enable_vae_tiling」" in zh
