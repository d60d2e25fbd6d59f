"""InternVL's own fine-tuning script as a training stack: internvl_chat_finetune.py runs with
the repository's DeepSpeed configs (OpenGVLab/InternVL internvl_chat/zero_stage{1,2,3}_config
.json: 1e9 buckets, overlap_comm true; data/distributed.toml [deepspeed.stacks.internvl])."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.distributed import zero12_ipg_elements, zero_bucket_elements, zero_config
from advisor.models.choices import Parallelism
from advisor.models.workload import Workload
from advisor.parse import parse_query
from checks.cases import stack


def test_its_zero_configs_are_the_repositorys_files():
    z1 = zero_config("internvl", Parallelism.zero1, 2048)  # zero_stage1_config.json
    assert (z1["reduce_bucket_size"], z1["allgather_bucket_size"], z1["overlap_comm"]) == (
        1e9,
        1e9,
        1,
    )
    z3 = zero_config("internvl", Parallelism.zero3, 2048)  # zero_stage3_config.json
    assert (z3["reduce_bucket_size"], z3["prefetch_bucket_size"]) == (1e9, 1e9)


def test_a_full_fine_tune_takes_the_documented_overlap_rule_over_its_buckets():
    elements, factor, overlap = zero_bucket_elements("internvl", Parallelism.zero1, 2048, 2.2e9)
    assert (elements, factor, overlap) == (2e9, 4.5, True)  # 4.5 x (1e9 + 1e9)


def test_its_lora_holds_two_whole_gradient_buckets():
    assert zero12_ipg_elements("internvl", Parallelism.zero1, 4096) == (1e9, 2)
    w = Workload(
        model="internvl2-8b", mode="lora", num_gpus=2, parallelism="zero1", framework="internvl"
    )
    est = estimate(w).estimate
    assert est is not None
    comm = next(t for t in est.terms if t.name == "comm_buffers")
    assert comm.bytes == 2 * 1e9 * 2  # buf_0 + buf_1 of 1e9 16-bit elements


def test_the_script_name_names_the_stack_for_the_bot_and_the_case_adapter():
    parsed = parse_query(
        "用 internvl_chat_finetune.py 对 internvl2-8b 做 lora 微调，2张a100，zero1"
    )
    assert parsed.workload is not None
    assert (parsed.workload.model, parsed.workload.framework) == ("internvl2-8b", "internvl")
    assert stack("InternVL internvl_chat_finetune.py (transformers Trainer + DeepSpeed)") == (
        "internvl"
    )


def test_the_models_name_alone_is_not_the_stack():
    parsed = parse_query("internvl2-8b lora 微调 2张a100 zero1")
    assert parsed.workload is not None
    assert parsed.workload.model == "internvl2-8b"
    assert parsed.workload.framework != "internvl"
