"""Cosmos-Predict1 Text2World as its own pipeline runs it (nvidia-cosmos/cosmos-predict1 at
4ed35fa, read 2026-12-07; data/models/video_cosmos.toml): each size pinned to the shapes in
its configs and code, each --offload_* flag read from a question."""

from advisor import catalog
from advisor.memory import estimate, video
from advisor.models.choices import Offload
from advisor.models.workload import Workload
from advisor.parse import parse_query

SEVEN, FOURTEEN = "cosmos-predict1-7b-text2world", "cosmos-predict1-14b-text2world"


def _dit(h: int, blocks: int) -> float:
    # FA-CA-MLP block: self-attn 4h^2, cross-attn q/o 2h^2 + k/v from T5's 1024, MLP 8h^2,
    # adaLN-LoRA (dim 256) on three sub-blocks; the timestep embedder h x h + h x 3h
    block = 4 * h * h + 2 * h * h + 2 * 1024 * h + 8 * h * h + 3 * (256 * h + 256 * 3 * h)
    return (blocks * block + 4 * h * h) / 1e9


def _spec(model_id: str):
    spec = catalog.find_model(model_id)
    assert spec is not None and spec.diffusion is not None
    return spec.diffusion


def test_the_dits_are_their_configs_shapes():
    # net.py FADITV2Config 28 x 4096, FADITV2_14B_Config 36 x 5120
    assert round(_dit(4096, 28), 2) == _spec(SEVEN).denoiser_params_b == 7.23
    assert round(_dit(5120, 36), 2) == _spec(FOURTEEN).denoiser_params_b == 14.26


def test_the_t5_11b_encoder_is_loaded_in_fp32_on_the_gpu_only():
    # google-t5/t5-11b: d_model 1024, 128 heads x 128, d_ff 65536, 24 layers, vocab 32128
    encoder = 24 * (4 * 1024 * 128 * 128 + 2 * 1024 * 65536) + 32128 * 1024
    d = _spec(SEVEN)
    assert d.text_encoders_params_b == [round(encoder / 1e9, 3)] == [4.865]
    assert d.text_encoder_format == "fp32" and d.text_encoder_gpu_only
    assert d.text_tokens == 512 and d.cfg_batched is False


def test_the_prompt_upsampler_is_mistral_nemo_12b():
    # MISTRAL_ARCHITECTURES["12b"]: 40 x 5120, 32 heads of 128, 8 KV heads, ffn 14336,
    # vocab 131072 with untied embeddings
    layer = 5120 * 4096 * 2 + 2 * 5120 * 1024 + 3 * 5120 * 14336
    total = 40 * layer + 2 * 131072 * 5120
    assert round(total / 1e9, 2) == _spec(SEVEN).prompt_upsampler_params_b == 12.25


def _conv(ci: int, co: int, k: int) -> int:
    return ci * co * k + co


def _res(ci: int, co: int) -> int:
    n = 2 * ci + _conv(ci, co, 9) + _conv(co, co, 3) + 2 * co + _conv(co, co, 9)
    return n + _conv(co, co, 3) + (_conv(ci, co, 1) if ci != co else 0)


def test_the_cv8x8x8_tokenizer_is_its_conv_shapes():
    attn = 2 * 512 + 4 * _conv(512, 512, 1)
    dec = _conv(16, 512, 9) + _conv(512, 512, 3) + 8 * _res(512, 512) + 2 * attn
    dec += _conv(512, 512, 3) + _conv(512, 512, 9) + _conv(512, 512, 1)  # hybrid upsample
    dec += _res(512, 256) + 2 * _res(256, 256) + 2 * 256 + _conv(256, 192, 9) + _conv(192, 192, 3)
    enc = _conv(192, 128, 9) + _conv(128, 128, 3) + _res(128, 256) + _res(256, 256)
    enc += _conv(256, 256, 9) + _conv(256, 256, 3) + _conv(256, 256, 1)  # hybrid downsample
    enc += _res(256, 512) + 5 * _res(512, 512) + 2 * attn + 2 * 512
    enc += _conv(512, 16, 9) + _conv(16, 16, 3)
    assert round((dec + enc) / 1e9, 3) == _spec(SEVEN).vae_params_b == 0.106


def test_time_is_compressed_8x_and_the_last_stage_runs_at_a_quarter():
    geo = video.geometry(SEVEN)
    assert geo is not None and geo.temporal == 8 and geo.spatial == 8
    assert video.latent_frames(geo, 121) == 16
    assert video.transformer_tokens(geo, 121, 1280, 704) == 16 * 44 * 80
    # Haar unpatcher of 4: 31 frames at 320 x 176 before it
    assert video.stage_frames(geo, 121) == 31
    assert video.decoded_pixels(geo, 121, 1280, 704) == 31 * 320 * 176
    # the first 512 -> 256 resnet's first conv: input, SiLU, cat and pad copies, 2048 ch
    assert geo.decoder_channels * _spec(SEVEN).vae_decode_tensors == 512 * 4


def test_the_prompt_upsamplers_phase_sits_beside_the_resident_dit():
    r = estimate(Workload(model=SEVEN, mode="inference", text_encoders_on_gpu=False))
    assert r.estimate is not None
    b = r.estimate.breakdown
    assert b["prompt_upsampler"] == 12.25e9 * 2 and "text_encoders" not in b
    assert b["weights"] == 7.23e9 * 2


def test_without_the_upsampler_the_t5_phase_is_the_peak_when_t5_is_offloaded():
    r = estimate(
        Workload(
            model=SEVEN, mode="inference", text_encoders_on_gpu=False, prompt_upsampler_off=True
        )
    )
    assert r.estimate is not None
    b = r.estimate.breakdown
    assert b["text_encoders"] == 4.865e9 * 4 and "prompt_upsampler" not in b


def test_every_model_offloaded_holds_one_phase():
    r = estimate(Workload(model=FOURTEEN, mode="inference", cpu_offload=Offload.model))
    assert r.estimate is not None
    assert set(r.estimate.breakdown) <= {"weights", "activations", "runtime_overhead"}


def test_the_offload_flags_are_read_from_a_question():
    w = parse_query(
        "Cosmos-Predict1-7B on an H100 --offload_text_encoder_model --offload_prompt_upsampler "
        "--offload_guardrail_models"
    ).workload
    assert w.model == SEVEN and w.cpu_offload == Offload.none and not w.text_encoders_on_gpu
    w = parse_query(
        "cosmos predict1 14b --offload_diffusion_transformer --offload_tokenizer "
        "--offload_text_encoder_model 4090"
    ).workload
    assert w.model == FOURTEEN and w.cpu_offload == Offload.model
    assert parse_query("Cosmos-Predict1 7B 生成视频 关闭提示词扩写").workload.prompt_upsampler_off
    assert parse_query(
        "Cosmos-Predict1-7B --disable_prompt_upsampler"
    ).workload.prompt_upsampler_off


def test_the_answer_names_the_authors_script_not_diffusers():
    r = estimate(Workload(model=SEVEN, mode="inference"))
    assert r.estimate is not None
    said = {(a.field, a.value) for a in r.assumed}
    assert ("own_script", "text2world.py") in said
    assert not any(f == "runtime" for f, _ in said)
