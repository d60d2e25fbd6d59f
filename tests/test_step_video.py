"""Step-Video-T2V as its authors' scripts run it (stepfun-ai/Step-Video-T2V at 675e08c, read
2026-12-08; data/models/video_step.toml): the DiT pinned to model.py's shapes, the latent
frames to video_pipeline.py prepare_latents, and the card holding the DiT alone (the text
encoders and the VAE served by api/call_remote_server.py on another GPU)."""

from advisor import catalog
from advisor.memory import estimate, video
from advisor.models.workload import Workload
from advisor.parse import parse_query

STEP = "step-video-t2v"


def _spec():
    spec = catalog.find_model(STEP)
    assert spec is not None and spec.diffusion is not None
    return spec.diffusion


def test_the_dit_is_model_py_shapes():
    # 48 layers, 48 heads x 128; a block: self-attn 4h^2, cross-attn 4h^2, FeedForward 8h^2;
    # AdaLayerNormSingle 256 -> h -> h, h -> 6h; caption projection h -> h -> h; clip 1024 -> h
    h = 48 * 128
    blocks = 48 * 16 * h * h
    adaln = 256 * h + h * h + h * 6 * h
    total = blocks + adaln + 2 * h * h + 1024 * h
    d = _spec()
    assert round(total / 1e9, 2) == d.denoiser_params_b == 29.34
    assert d.inner_dim == h and d.blocks == 48 and d.attn_heads == 48
    assert d.denoiser_act_bytes_per_token == h * 18 * 2
    # 320 Step-LLM tokens + 77 CLIP tokens as the cross-attention keys
    assert d.text_tokens == 320 + 77 and d.cfg_batched


def test_every_whole_17_frames_make_3_latent_frames():
    g = video.geometry(STEP)
    assert g is not None and (g.spatial, g.patch) == (16, 1)
    # prepare_latents: max(num_frames // 17 * 3, 1)
    assert video.latent_frames(g, 204) == 36
    assert video.latent_frames(g, 136) == 24
    assert video.latent_frames(g, 50) == 6 and video.latent_frames(g, 10) == 1
    assert video.transformer_tokens(g, 204, 992, 544) == 36 * (544 // 16) * (992 // 16)


def test_the_card_holds_the_dit_alone():
    r = estimate(Workload(model=STEP, mode="inference", video_frames=204))
    assert r.estimate is not None
    b = r.estimate.breakdown
    assert "vae" not in b and "text_encoders" not in b and "vae_decode" not in b
    assert b["weights"] == 29.34e9 * 2
    # CFG as one batch of 2 over 36 x 34 x 62 latent tokens and the 397 text keys
    assert b["activations"] == 2 * (36 * 34 * 62 + 397) * 221184
    said = {(a.field, a.value) for a in r.assumed}
    assert ("served_elsewhere", "api/call_remote_server.py") in said
    assert ("own_script", "run_parallel.py") in said


def test_the_frames_grow_the_figure():
    short = estimate(Workload(model=STEP, mode="inference", video_frames=136))
    long = estimate(Workload(model=STEP, mode="inference", video_frames=204))
    assert short.estimate is not None and long.estimate is not None
    assert short.estimate.total_bytes < long.estimate.total_bytes


def test_a_question_reaches_the_model_and_its_frames():
    for q in ("step-video-t2v 544x992 204帧 h100", "stepvideo t2v 992x544 204 frames on an h100"):
        w = parse_query(q).workload
        assert w.model == STEP and w.video_frames == 204
