"""Prodigy keeps four buffers a parameter where AdamW keeps two: konstmish/prodigy
prodigyopt/prodigy.py Prodigy.step initializes state['s'], state['p0'] (a clone of the
parameter), state['exp_avg'] and state['exp_avg_sq'] (data/training_stacks.toml
[optimizer_state.prodigy]); read from a question as from a case's optimizer."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.stacks import prodigy_buffers
from advisor.memory.training_recipe import optimizer_state_bytes_per_param
from advisor.models.choices import Kind, Mode, Optimizer
from advisor.models.workload import Workload
from advisor.parse import parse_query
from checks.cases import OPTIMIZERS


def test_prodigy_keeps_s_p0_and_both_moments() -> None:
    assert prodigy_buffers() == 4
    assert optimizer_state_bytes_per_param(Optimizer.prodigy, 4, False) == 16
    assert optimizer_state_bytes_per_param(Optimizer.adamw, 4, False) == 8


def test_a_full_sdxl_fine_tune_with_prodigy_holds_twice_adamws_state() -> None:
    def optimizer_bytes(opt: Optimizer) -> int:
        w = Workload(
            kind=Kind.diffusion,
            model="sdxl",
            mode=Mode.full,
            weights_format="fp32",
            compute_dtype="bf16",
            optimizer=opt,
        )
        est = estimate(w).estimate
        assert est is not None
        return next(t.bytes for t in est.terms if t.name == "optimizer")

    assert optimizer_bytes(Optimizer.prodigy) == 2 * optimizer_bytes(Optimizer.adamw)


def test_prodigy_is_read_from_a_question_and_a_case() -> None:
    w = parse_query("sdxl lora training with prodigy on a 4090").workload
    assert w is not None and w.optimizer == Optimizer.prodigy
    w = parse_query("sdxl lora 训练 优化器 prodigy 4090").workload
    assert w is not None and w.optimizer == Optimizer.prodigy
    assert OPTIMIZERS["prodigy"] == "prodigy"
