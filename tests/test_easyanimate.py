"""EasyAnimate V5.1 12B (alibaba-pai/EasyAnimateV5.1-12b-zh): its MagVIT decode counted from
diffusers' autoencoder_kl_magvit.py at 58eb52c (data/models/video_more.toml)."""

from advisor import catalog
from advisor.memory import estimate, video
from advisor.models.workload import Workload
from advisor.parse import parse_query


def _conv(cin: int, cout: int, k: int = 3) -> int:
    return cin * cout * k**3 + cout


def _resnet(cin: int, cout: int) -> int:
    shortcut = _conv(cin, cout, 1) if cin != cout else 0
    return 2 * cin + _conv(cin, cout) + 2 * cout + _conv(cout, cout) + shortcut


def test_the_magvit_vae_size_is_its_conv_shapes():
    # decoder: conv_in 16 -> 512, mid 2 resnets, up blocks of 3 resnets (512, 512, 256, 128)
    # with an upsampler conv on the first three, norm + conv_out 128 -> 3
    dec = _conv(16, 512) + 2 * _resnet(512, 512)
    widths, prev = [512, 512, 256, 128], 512
    for i, w in enumerate(widths):
        dec += _resnet(prev, w) + 2 * _resnet(w, w) + (_conv(w, w) if i < 3 else 0)
        prev = w
    dec += 2 * 128 + _conv(128, 3)
    # encoder: conv_in 3 -> 128, down blocks of 2 resnets (128, 256, 512, 512) with a
    # downsampler conv on the first three, mid 2 resnets, norm + conv_out 512 -> 32
    enc, prev = _conv(3, 128), 128
    for i, w in enumerate([128, 256, 512, 512]):
        enc += _resnet(prev, w) + _resnet(w, w) + (_conv(w, w) if i < 3 else 0)
        prev = w
    enc += 2 * _resnet(512, 512) + 2 * 512 + _conv(512, 32)
    spec = catalog.find_model("alibaba-pai/EasyAnimateV5.1-12b-zh")
    assert spec is not None and spec.diffusion is not None
    assert round((dec + enc) / 1e9, 3) == spec.diffusion.vae_params_b == 0.244


def test_the_decoder_maps_and_conv_caches_are_counted_from_its_code():
    geo = video.geometry("easyanimate-v5.1-12b")
    spec = catalog.find_model("easyanimate-v5.1-12b")
    assert geo is not None and spec is not None and spec.diffusion is not None
    # one latent frame -> 4 output frames through the 128-channel stage
    assert geo.decode_frames == 4 and geo.decoder_channels == 128
    # the last block's first resnet: input 256, shortcut 128, SiLU 256, causal concat
    # 256 x 6/4, contiguous window 256 x 3/4, output 128 channels a frame
    peak = 256 + 128 + 256 + 256 * 6 / 4 + 256 * 3 / 4 + 128
    assert peak / 128 == 10.5 and spec.diffusion.vae_decode_tensors == 11
    caches = 1280 + 2304 / 4 + 3584 / 16 + 5136 / 64
    first_outputs = (256 + 512 / 4) / 2
    assert geo.cache_frames == 2 and geo.cache_channels == int(caches + first_outputs) == 2352


def test_the_readmes_sequential_offload_oom_at_768x1344x49_on_24gb():
    # README: 768x1344x49 cannot run on a 24 GB card even with sequential offload
    r = estimate(
        Workload(
            model="easyanimate-v5.1-12b",
            mode="inference",
            cpu_offload="sequential",
            video_frames=49,
            image_width=1344,
            image_height=768,
        )
    )
    assert r.estimate is not None and r.estimate.total_bytes > 22.4 * 2**30


def test_easyanimate_is_read_from_a_question():
    for text in ("EasyAnimate V5.1 768x1344 49 frames on a 4090", "EasyAnimate 生成视频要多少显存"):
        assert parse_query(text).workload.model == "easyanimate-v5.1-12b"
