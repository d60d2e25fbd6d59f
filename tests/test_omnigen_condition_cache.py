"""OmniGen v1's condition key/value cache kept on the GPU (offload_kv_cache=False): its
OmniGenCache.update stores slices of the first step's key and value states, views that
keep each layer's whole fused qkv_proj output [rows, N, 9216] and roped keys
[rows, N, 3072] alive (VectorSpaceLab/OmniGen c346a29 scheduler.py; transformers 4.45
Phi3SdpaAttention). data/models/image_dit.toml [omnigen-v1]."""

from __future__ import annotations

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.parse.canonical import canonical_query

GIB = 2**30


def activations(**kw: object):  # noqa: ANN201
    est = estimate(Workload(model="omnigen-v1", mode="inference", **kw)).estimate  # type: ignore[arg-type]
    assert est is not None
    return est, {t.name: t for t in est.terms}.get("activations")


def test_the_cache_keeps_every_layers_whole_qkv_output_and_roped_keys() -> None:
    spec = find_model("omnigen v1")
    assert spec is not None and spec.id == "omnigen-v1" and spec.diffusion is not None
    # Phi-3-mini: 32 layers, fused qkv_proj 3 x 3072 outputs + the roped keys 3072, 16-bit
    assert spec.diffusion.condition_cache_bytes_per_token == 32 * (3 * 3072 + 3072) * 2
    assert not spec.diffusion.cfg_batched  # OmniGenPipeline's separate_cfg_infer=True
    assert spec.diffusion.vae_force_upcast  # AutoencoderKL.from_pretrained with no dtype


def test_the_default_offloads_the_cache_and_counts_nothing() -> None:
    _, act = activations()
    assert act is None or act.formula_key != "activations.denoiser_condition_cache"


def test_the_cache_on_the_gpu_is_counted_for_both_guidance_rows() -> None:
    est, act = activations(condition_cache_on_gpu=True)
    assert act is not None and act.formula_key == "activations.denoiser_condition_cache"
    tokens = (1024 // 16) ** 2 + 120  # 4,096 latent tokens + the padded prompt
    cache = 2 * tokens * 786_432
    assert abs(act.values["cache_gib"] - cache / GIB) < 0.01
    # the docs' A800 table: use_kv_cache 18G against use_kv_cache,offload_kv_cache 10G (text
    # only, the guidance rows batched): the term is most of those 8 G
    assert 0.7 < cache / 8e9 < 1.0
    plain, _ = activations()
    assert est.allocated_bytes > plain.allocated_bytes


def test_a_question_turns_the_cache_offload_off_in_both_languages() -> None:
    for q in (
        "OmniGen v1 1024x1024 offload_kv_cache=False on an A800",
        "omnigen 生成 1024 图片 kv缓存不卸载 4090",
    ):
        w = parse_query(q).workload
        assert w.model == "omnigen-v1" and w.condition_cache_on_gpu, q
    assert not parse_query("OmniGen v1 1024x1024 on an A800").workload.condition_cache_on_gpu
    line = canonical_query(parse_query("OmniGen v1 offload_kv_cache=False 4090"))
    assert "offload_kv_cache=false" in line
    assert parse_query(line).workload.condition_cache_on_gpu
