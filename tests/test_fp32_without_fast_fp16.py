"""A CNN / detector / segmentor trained as its configs train it (fp32, no AMP asked) is
answered as fp32, and on a card without fast fp16 the answer says so with mixed precision's
speed cost (data/capabilities.toml [fast_fp16], the CUDA programming guide's arithmetic
throughput table: 16-bit results per clock per SM 128 on 6.0, 2 on 6.1, none on 5.x)."""

from advisor.catalog import find_gpu
from advisor.constraints import has_fast_fp16
from tests.conftest import plain_answer


def _gpu(name: str):
    gpu = find_gpu(name)
    assert gpu is not None, name
    return gpu


def test_compute_capability_6_1_and_maxwell_have_no_fast_fp16():
    # 6.1 (GP102 and smaller): fp16 at 2 results per clock per SM against 128 for fp32
    assert not has_fast_fp16(_gpu("gtx 1080 ti"))
    assert not has_fast_fp16(_gpu("tesla m40 24gb"))  # Maxwell 5.2: no fp16 arithmetic
    assert has_fast_fp16(_gpu("tesla p100 16gb"))  # GP100, 6.0: twice the fp32 rate
    assert has_fast_fp16(_gpu("t4"))
    assert has_fast_fp16(_gpu("rtx 3090"))


def test_an_fp32_segmentor_on_a_1080_ti_is_said_as_fp32_not_fp16_amp():
    zh = plain_answer("1080 Ti 训练 upernet swin-t mmseg ade20k", "zh")
    assert "按 fp32 训练来算" in zh and "混合精度能省下一部分激活显存" in zh
    assert "按 fp16 混合精度训练来算" not in zh
    en = plain_answer("train upernet swin-t with mmseg on ade20k, my 1080 ti", "en")
    assert "this assumes fp32 training" in en and "runs slower on this card" in en
    assert "this assumes fp16 mixed precision" not in en


def test_a_trainer_that_defaults_to_amp_keeps_its_fp16_line():
    # Ultralytics trains with amp=True (its check_amp turns it off only on GTX 16 cards)
    en = plain_answer("train yolov8n batch 16 on my 1080 ti", "en")
    assert "this assumes fp16 mixed precision" in en
    assert "this assumes fp32 training" not in en


def test_an_fp32_cnn_on_a_t4_no_longer_claims_fp16_amp():
    en = plain_answer("train resnet50 on a T4", "en")
    assert "this assumes fp16 mixed precision" not in en
    assert "this assumes fp32 training" not in en
