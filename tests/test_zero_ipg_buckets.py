"""ZeRO-1/2's gradient (ipg) buckets: DeepSpeedZeroOptimizer.backward() (stage_1_and_2.py)
allocates reduce_bucket_size elements at every backward, a second buffer with overlap_comm,
however few parameters train (data/distributed.toml [deepspeed] ipg_buffers)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from advisor.memory import estimate
from advisor.memory.distributed import zero12_ipg_elements
from advisor.models.choices import Parallelism
from advisor.models.workload import Workload

ROOT = Path(__file__).resolve().parent.parent


def _term(w: Workload):
    est = estimate(w).estimate
    assert est is not None
    return next(t for t in est.terms if t.name == "comm_buffers")


def _comm(w: Workload) -> tuple[int, str | None]:
    term = _term(w)
    return term.bytes, term.formula_key


def test_stage_1_and_2_backward_allocates_two_reduce_buckets_with_overlap():
    # the HF docs' sample ZeRO-2 config: reduce_bucket_size 2e8, overlap_comm true
    assert zero12_ipg_elements(None, Parallelism.zero2, 4096) == (2e8, 2)
    # LLaMA-Factory's ds_z2_config.json: 5e8, overlap_comm false -> buf_0 alone
    assert zero12_ipg_elements("llama-factory", Parallelism.zero2, 4096) == (5e8, 1)
    # ZeRO-1 runs the same optimizer (stage_1_and_2.py)
    assert zero12_ipg_elements(None, Parallelism.zero1, 4096) == (2e8, 2)


def test_a_lora_under_zero2_holds_the_whole_buckets_not_its_adapters_size():
    common = dict(model="qwen2.5-7b", mode="lora", num_gpus=2)
    sample, key = _comm(Workload(parallelism="zero2", **common))
    assert sample == 2 * 2e8 * 2  # buf_0 + buf_1, 16-bit
    assert key == "comm_buffers.ipg"
    lf, _ = _comm(Workload(parallelism="zero2", framework="llama-factory", **common))
    assert lf == 1 * 5e8 * 2
    zero1, _ = _comm(Workload(parallelism="zero1", **common))
    assert zero1 == sample


def test_a_full_fine_tune_keeps_the_documented_overlap_rule():
    term = _term(Workload(model="qwen2.5-7b", mode="full", num_gpus=4, parallelism="zero2"))
    # 4.5 x (allgather 2e8 + reduce 2e8), DeepSpeed docs: more than the two 2e8 buffers
    assert "4.5 x 400M elements" in term.formula


def test_the_bucket_line_reads_in_both_languages():
    for lang in ("en", "zh"):
        with (ROOT / "templates" / lang / "formulas.toml").open("rb") as fh:
            line = tomllib.load(fh)["formula"]["comm_buffers.ipg"]
        assert "{buffers}" in line and "{elements_m}" in line and "reduce_bucket_size" in line
