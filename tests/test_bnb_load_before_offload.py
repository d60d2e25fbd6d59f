"""bitsandbytes loads a pipeline's quantized components straight onto the GPU (its
quantizer's update_device_map sets the GPU when no device_map is given), so under
enable_model_cpu_offload / sequential offload they were all on the GPU together once,
before the offload hooks moved them off: the peak is at least their weights."""

from __future__ import annotations

from advisor.memory import GIB, estimate
from advisor.memory.quantizers import component_weight_bytes
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.workload import Workload


def flux(**extra: object) -> Workload:
    fields: dict = dict(
        model="flux.1-dev",
        mode="inference",
        weights_format="nf4",
        text_encoder_format="nf4",
        image_width=1024,
        image_height=1024,
        cpu_offload="model",
    )
    return Workload(**(fields | extra))


def allocated(w: Workload) -> int:
    est = estimate(w).estimate
    assert est is not None
    return est.allocated_bytes


def bnb_weights(transformer: bool = True, t5: bool = True) -> float:
    # FLUX.1-dev transformer 11.9B, T5-XXL encoder 4.76B (its `wo` kept fp32 by bitsandbytes)
    out = estimate_weight_bytes(11.9e9, None, "nf4") if transformer else 0.0
    return out + (component_weight_bytes(4.76, "nf4") if t5 else 0.0)


def test_model_offload_peak_holds_the_nf4_transformer_and_t5_loaded_together() -> None:
    # the run alone holds one component at a time (transformer + activations, ~6.9 GiB)
    assert allocated(flux()) >= bnb_weights()
    assert allocated(flux()) / GIB > 11.5


def test_sequential_offload_peak_holds_them_too() -> None:
    assert allocated(flux(cpu_offload="sequential")) >= bnb_weights()


def test_the_load_is_the_term_the_answer_shows() -> None:
    est = estimate(flux()).estimate
    assert est is not None
    keys = [t.formula_key for t in est.terms]
    assert "weights.bnb_load_before_offload" in keys


def test_a_text_encoder_left_in_16_bit_is_not_loaded_on_the_gpu_by_bitsandbytes() -> None:
    # T5 in bf16 loads on the CPU; only the nf4 transformer is put on the GPU at load,
    # smaller than the T5 stage of the run (~9 GiB)
    w = flux(text_encoder_format="bf16")
    est = estimate(w).estimate
    assert est is not None
    assert "weights.bnb_load_before_offload" not in [t.formula_key for t in est.terms]


def test_torchao_loads_where_it_is_told_so_offload_keeps_its_one_stage_peak() -> None:
    w = flux(weights_format="torchao-int8", text_encoder_format="torchao-int8")
    est = estimate(w).estimate
    assert est is not None
    assert "weights.bnb_load_before_offload" not in [t.formula_key for t in est.terms]


def test_comfyui_loads_through_its_own_loader() -> None:
    est = estimate(flux(runtime="comfyui")).estimate
    assert est is not None
    assert "weights.bnb_load_before_offload" not in [t.formula_key for t in est.terms]
    assert est.allocated_bytes < bnb_weights()
