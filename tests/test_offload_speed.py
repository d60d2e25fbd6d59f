"""The image speed counts the weights CPU offload moves over PCIe (capabilities.toml
[offload_transfer], measured on SDXL in the HF blog 'Exploring simple optimizations for
SDXL'): sequential offload streams the denoiser at every step, model offload moves each
component once per image. An answer never says 'several times slower' beside the speed of
the pipeline running resident."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.recommend.offload_speed import link_gb_per_s, offload_seconds


def ask(line: str):
    return recommend_query(parse_query(line))


def resident_speed(rec) -> float:
    """The named card's images/min for the same pipeline with no offload (its compute)."""
    from advisor.recommend.speed import card_speed, speed_facts, speed_row

    base = speed_facts(rec.setup)._replace(offload=("", 0.0))
    gpu = catalog.gpus()[rec.named.gpu_id]
    return speed_row(base, card_speed(gpu), 1)[5]


@pytest.mark.parametrize(
    ("line", "mode"),
    [
        ("sdxl出图 3060ti 8g跑的动吗", None),
        ("sdxl 1024 on my rtx 3070 8gb", None),
        ("flux dev fp16 4090能跑吗", "sequential"),
        ("flux.1-dev fp16 on my rtx 4090", "sequential"),
        ("flux dev fp8 4090 model offload", "model"),
        ("sdxl sequential offload on a 3060 12g", "sequential"),
    ],
)
def test_an_offloaded_pipeline_is_slower_by_the_weights_it_moves(line: str, mode) -> None:
    rec = ask(line)
    w = rec.setup.workload
    if mode is not None:
        assert w.cpu_offload.value == mode
    assert w.cpu_offload.value in ("model", "sequential")
    resident = resident_speed(rec)
    shown = rec.named.images_per_min
    assert shown is not None and resident is not None and shown < resident
    from advisor.recommend.speed import speed_facts

    moved_mode, moved = speed_facts(rec.setup).offload
    assert moved_mode == w.cpu_offload.value
    spec = catalog.models()[rec.result.model.id]
    den = (
        spec.diffusion.denoiser_params_b
        * 1e9
        * (2 if w.weights_format in (None, "bf16", "fp16") else 1)
    )
    steps = w.denoise_steps or 30
    assert moved >= den * (steps if moved_mode == "sequential" else 1)


def test_flux_fp16_streamed_and_fp8_with_model_offload_are_not_the_same_speed() -> None:
    fp16 = ask("flux dev fp16 4090能跑吗").named.images_per_min
    fp8 = ask("flux dev fp8 4090 model offload").named.images_per_min
    assert fp16 is not None and fp8 is not None
    assert fp8 > 2 * fp16


def test_the_link_sets_the_rate() -> None:
    """A PCIe 4.0 x8 card (4060 Ti) moves half as fast as the x16 link measured; PCIe 5.0
    is not assumed to speed up pageable copies."""
    assert link_gb_per_s("4.0 x16") == pytest.approx(31.5, rel=0.01)
    assert link_gb_per_s("4.0 x8") == pytest.approx(15.75, rel=0.01)
    assert link_gb_per_s(None) is None
    g = catalog.gpus()
    x8 = next(x for x in g.values() if x.pcie == "4.0 x8")
    x16 = next(x for x in g.values() if x.pcie == "4.0 x16")
    gen5 = next(x for x in g.values() if x.pcie == "5.0 x16")
    assert offload_seconds("model", 1.5e9, x16) == pytest.approx(1.0)
    assert offload_seconds("model", 1.5e9, x8) == pytest.approx(2.0, rel=0.01)
    assert offload_seconds("model", 1.5e9, gen5) == pytest.approx(1.0)


def test_resident_cards_pay_nothing() -> None:
    rec = ask("sdxl on a100 80gb")
    assert rec.setup.workload.cpu_offload.value == "none"
    assert rec.named.images_per_min == resident_speed(rec)
