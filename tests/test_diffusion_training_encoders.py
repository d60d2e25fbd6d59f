"""Image and video LoRA trainers: the frozen text encoders and VAE are on the training card
either through the steps (kohya sd-scripts and finetrainers unless told to cache) or while
they precompute embeddings and latents before them (advisor/memory/diffusion_training.py)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query

GIB = 2**30


def _run(**kw):
    return estimate(Workload(model="ltx-video", mode="lora", lora_rank=128, **kw))


def _assumed(r) -> dict[str, str]:
    return {a.field: a.value for a in r.assumed}


def test_a_trainer_not_told_to_cache_keeps_the_text_encoders_and_vae_resident():
    """LTX-Video (2B transformer) beside T5-XXL (4.8B): not told, the encoders stay on the
    card through the steps and the answer says so; more than the transformer's run alone."""
    r = _run()
    names = {t.name for t in r.estimate.terms}
    assert {"weights", "text_encoders", "vae"} <= names
    assert _assumed(r)["text_encoders"] == "resident"
    te = sum(t.bytes for t in r.estimate.terms if t.name == "text_encoders")
    assert te > 8.5 * GIB  # T5-XXL in bf16


def test_precomputed_embeddings_are_computed_on_the_card_first():
    """Told the embeddings are precomputed: the steps hold the transformer alone, but the
    card held T5-XXL and the VAE while precomputing, which is the larger peak here."""
    cached, resident = _run(text_encoders_on_gpu=False), _run()
    assert cached.estimate.total_bytes < resident.estimate.total_bytes
    assert _assumed(cached)["text_encoders"] == "precomputed_here"
    assert {t.name for t in cached.estimate.terms} == {
        "text_encoders",
        "vae",
        "vae_encode",
        "runtime_overhead",
    }
    assert cached.estimate.allocated_bytes > 8.5 * GIB


def test_the_trainers_caching_switches_are_read():
    for text in (
        "train ltx-video lora with precompute_conditions on 4090",
        "flux.1-dev lora training cache_text_encoder_outputs on 4090",
    ):
        p = parse_query(text)
        assert p.ok and p.workload.mode.is_training and p.workload.text_encoders_on_gpu is False


def test_caching_latents_on_the_card_adds_the_vae_encoders_working_set():
    """kohya --cache_latents / finetrainers' precompute encode each sample on the training
    card: the VAE's full-resolution stages for one 1024x1024 image (128 channels x 2 B x the
    9 maps the decoder's mirror stage holds), beside the encoders' weights."""
    r = estimate(
        Workload(
            model="flux.1-dev",
            mode="qlora",
            weights_format="nf4",
            image_width=1024,
            image_height=1024,
            gradient_checkpointing=True,
            text_encoders_on_gpu=False,
        )
    )
    encode = next(t for t in r.estimate.terms if t.name == "vae_encode")
    assert encode.bytes == 1024 * 1024 * 128 * 2 * 9


def test_latents_not_cached_are_encoded_each_step_beside_the_weights():
    """finetrainers without --precompute_conditions encodes every step's video on the card
    (trainer.py 0329f619: prepare_latents -> vae.encode, then prepare_conditions): for LTX-
    Video at 49x512x768 the encode of the batch's video outweighs the checkpointed step, so
    the step's peak is the encode beside the weights, optimizer states and resident encoders
    (the previous step's gradients are gone, zero_grad sets them to None)."""
    r = _run(video_frames=49, image_width=768, image_height=512, gradient_checkpointing=True)
    terms = {t.name: t for t in r.estimate.terms}
    assert terms["vae_encode"].formula_key == "vae_encode.per_step"
    assert "gradients" not in terms and "activations" not in terms
    assert {"weights", "optimizer", "text_encoders", "vae"} <= terms.keys()
    # the same encode the precompute phase counts for one sample
    cached = {
        t.name: t
        for t in _run(
            video_frames=49, image_width=768, image_height=512, text_encoders_on_gpu=False
        ).estimate.terms
    }
    assert terms["vae_encode"].bytes == cached["vae_encode"].bytes
    assert sum(t.bytes for t in r.estimate.terms if t.name != "runtime_overhead") == (
        r.estimate.allocated_bytes
    )


def test_a_step_that_outweighs_the_encode_keeps_its_gradients_and_activations():
    """Two samples per step of 1024 px images through FLUX without checkpointing: the
    backward is the larger moment, and the per-step encode does not show."""
    r = estimate(
        Workload(model="flux.1-dev", mode="lora", gradient_checkpointing=False, batch_size=2)
    )
    names = {t.name for t in r.estimate.terms}
    assert {"gradients", "activations"} <= names and "vae_encode" not in names


def test_latents_cached_leave_no_per_step_encode():
    """kohya / the diffusers scripts' --cache_latents: the latents are encoded before the
    steps, so a step holds no VAE encode, whatever the text encoders do."""
    p = parse_query("flux.1-dev lora training cache_latents on 3090")
    assert p.ok and p.workload.latents_cached and p.workload.text_encoders_on_gpu
    names = {t.name for t in estimate(p.workload).estimate.terms}
    assert "vae_encode" not in names and "activations" in names
    assert parse_query("sdxl lora 训练 缓存潜变量 4090").workload.latents_cached
    assert not parse_query("flux.1-dev lora training on 3090").workload.latents_cached


def test_the_per_step_encode_grows_with_the_batch_unless_the_vae_is_sliced():
    """vae.encode runs on the whole batch; with enable_slicing one sample at a time."""
    kw = dict(video_frames=49, image_width=768, image_height=512, gradient_checkpointing=True)
    one, two = _run(**kw), _run(batch_size=2, **kw)
    sliced = _run(batch_size=2, vae_slicing=True, **kw)

    def enc(r):
        return next(t for t in r.estimate.terms if t.name == "vae_encode")

    assert enc(two).bytes == 2 * enc(one).bytes
    assert enc(sliced).bytes == enc(one).bytes and enc(sliced).values["batch"] == 1
