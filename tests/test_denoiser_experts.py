"""A denoiser made of experts that take turns by timestep (Wan2.2 A14B: a high-noise and a
low-noise 14B DiT) holds one expert on the GPU under model offload: Wan2.2's
wan/text2video.py _prepare_model_for_timestep moves the idle expert to the CPU and the
required one to the GPU under --offload_model True, and diffusers' WanPipeline hooks
transformer and transformer_2 as two components (data/models/video.toml)."""

from __future__ import annotations

from advisor.catalog import find_model
from advisor.memory import estimate
from advisor.models.choices import Offload
from advisor.models.workload import Workload

WAN_720P = dict(model="wan2.2-t2v-a14b", image_width=1280, image_height=720, video_frames=81)


def terms(**kw: object) -> dict[str, object]:
    est = estimate(Workload(**kw)).estimate
    assert est is not None
    return {t.name: t for t in est.terms}


def test_wan22_a14b_is_two_equal_experts_of_wan21_14b_shape() -> None:
    spec = find_model("Wan-AI/Wan2.2-T2V-A14B")
    assert spec is not None and spec.diffusion is not None
    assert spec.diffusion.denoiser_experts == 2
    # each expert is a Wan2.1-14B transformer (14.29B, data/models/video.toml)
    wan21 = find_model("wan2.1-t2v-14b")
    assert wan21 is not None and wan21.diffusion is not None
    one = spec.diffusion.denoiser_params_b / spec.diffusion.denoiser_experts
    assert abs(one - wan21.diffusion.denoiser_params_b) < 0.01


def test_model_offload_holds_one_expert_while_denoising() -> None:
    t = terms(cpu_offload=Offload.model, **WAN_720P)
    w = t["weights"]
    assert w.formula_key == "weights.model_offload_expert"  # type: ignore[attr-defined]
    assert w.values["experts"] == 2  # type: ignore[attr-defined]
    # one 14.29B expert in bf16, not both
    assert abs(w.bytes - 14.29e9 * 2) < 0.05e9  # type: ignore[attr-defined]


def test_everything_on_the_gpu_still_holds_both_experts() -> None:
    t = terms(**WAN_720P)
    assert abs(t["weights"].bytes - 28.58e9 * 2) < 0.1e9  # type: ignore[attr-defined]


def test_a_single_denoiser_keeps_the_plain_model_offload_line() -> None:
    t = terms(
        model="wan2.1-t2v-14b",
        cpu_offload=Offload.model,
        image_width=1280,
        image_height=720,
        video_frames=81,
    )
    assert t["weights"].formula_key == "weights.model_offload"  # type: ignore[attr-defined]
