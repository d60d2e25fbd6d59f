"""Latent frames as each pipeline's prepare_latents counts them: causal VAEs keep the first
frame (1 + (F - 1) / t); Allegro compresses an even count whole (pipeline_allegro.py,
diffusers 58eb52c and rhymes-ai/Allegro f395a54)."""

from advisor.memory import video


def test_allegro_compresses_an_even_frame_count_whole():
    geo = video.geometry("allegro")
    assert geo is not None and geo.temporal == 4
    assert video.latent_frames(geo, 88) == 22  # math.ceil(88 / 4)
    assert video.latent_frames(geo, 89) == 23  # math.ceil((89 - 1) / 4) + 1
    # 22 latent frames of 45 x 80 tokens at 1280x720
    assert video.transformer_tokens(geo, 88, 1280, 720) == 22 * 45 * 80


def test_a_causal_vae_keeps_its_first_frame():
    geo = video.geometry("cogvideox-5b")
    assert geo is not None and not geo.even_frames_whole
    assert video.latent_frames(geo, 48) == 13 and video.latent_frames(geo, 49) == 13
