"""A named training stack's own defaults when the user leaves them out
(data/training_stacks.toml): LoRA targets, and ms-swift's PEFT adapters."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.render import assumption


def _run(framework: str | None, targets: str | None = None):
    return estimate(
        Workload(
            model="qwen2.5-7b",
            mode="lora",
            seq_len=2048,
            gradient_checkpointing=False,
            framework=framework,
            lora_targets=targets,
        )
    )


def test_ms_swift_lora_adapts_every_linear_layer_by_default():
    """ms-swift's tuner_args.py: target_modules = ['all-linear']; the same estimate as
    saying all-linear, and the answer says it assumed so."""
    bare, told = _run("ms-swift"), _run("ms-swift", "all-linear")
    assert bare.estimate.allocated_bytes == told.estimate.allocated_bytes
    assert {a.field: a.value for a in bare.assumed}["lora_targets"] == "all-linear"
    assert bare.estimate.allocated_bytes > _run(None).estimate.allocated_bytes


def test_llama_factory_defaults_to_all_and_a_named_target_wins():
    assert {a.field: a.value for a in _run("llama-factory").assumed}["lora_targets"] == "all"
    named = _run("llama-factory", "q_proj,v_proj")
    assert "lora_targets" not in {a.field for a in named.assumed}
    assert named.estimate.allocated_bytes == _run(None, "q_proj,v_proj").estimate.allocated_bytes


def test_ms_swift_trains_peft_adapters_in_fp32():
    """tuner_backend defaults to 'peft' (base_args.py), whose adapters are fp32."""
    recipe = {a.field: a.value for a in _run("ms-swift").assumed}["training_recipe"]
    assert recipe == "adapters_fp32"


def test_the_assumption_reads_in_both_languages():
    # The value reads as what it is; which stack's default it is, is said only where a stack
    # is named (tests/test_answer_asked_points.py::test_lora_targets_are_said_as_the_named_stacks_default)
    en = assumption("en", "lora_targets", "all-linear")
    assert "every linear layer" in en and "all-linear" not in en and "ms-swift" not in en
    zh = assumption("zh", "lora_targets", "all-linear")
    assert "所有线性层" in zh and "all-linear" not in zh


def _gc_assumed(
    framework: str | None, cards: int = 1, mode: str = "lora", fmt: str | None = None
) -> tuple[str, int]:
    w = Workload(
        model="llama-3.1-8b", mode=mode, seq_len=2048, framework=framework, weights_format=fmt
    )
    if cards > 1:
        w = w.model_copy(update={"num_gpus": cards, "parallelism": "fsdp"})
    r = estimate(w)
    return {a.field: a.value for a in r.assumed}[
        "gradient_checkpointing"
    ], r.estimate.allocated_bytes


def test_a_stack_that_keeps_every_activation_by_default_is_estimated_so():
    """transformers' TrainingArguments.gradient_checkpointing defaults to False and LitGPT's
    finetune/lora.py checkpoints only under FSDP (several cards): named without the setting,
    those runs keep every layer's activations and need more; with no stack named, an 8B
    LoRA is assumed checkpointed (LLaMA-Factory, ms-swift, Unsloth, torchtune turn it on)."""
    plain, plain_b = _gc_assumed(None)
    hf, hf_b = _gc_assumed("transformers")
    lit, lit_b = _gc_assumed("litgpt")
    assert (plain, hf, lit) == ("on", "off", "off")
    assert hf_b > plain_b and lit_b > plain_b
    assert _gc_assumed("litgpt", cards=2)[0] == "on"


def test_qlora_under_transformers_checkpoints_as_peft_prepares_it():
    """A QLoRA script prepares the 4-bit model with PEFT's prepare_model_for_kbit_training,
    whose use_gradient_checkpointing defaults to True: named without the setting, a QLoRA run
    under transformers or PEFT is checkpointed, while a plain LoRA run there is not."""
    assert _gc_assumed("transformers", mode="qlora")[0] == "on"
    assert _gc_assumed("peft", mode="qlora")[0] == "on"
    assert _gc_assumed("transformers", mode="lora")[0] == "off"
    assert _gc_assumed("litgpt", mode="qlora")[0] == "off"


def test_a_lora_over_8_bit_weights_checkpoints_as_peft_prepares_it():
    """An 8-bit LoRA (load_in_8bit, the PEFT Whisper and alpaca-lora recipes) goes through the
    same prepare_model_for_kbit_training as QLoRA, which turns checkpointing on: the answer
    had assumed it off while assuming that helper's fp32 upcast, and sized Whisper large-v2
    8-bit LoRA at batch 1 at 9.1 GiB against PEFT's "under 8 GB" recipe."""
    on, on_b = _gc_assumed("peft", fmt="int8")
    off, off_b = _gc_assumed("peft", fmt="bf16")
    assert (on, off) == ("on", "off") and on_b < off_b


def test_axolotl_is_sized_as_its_example_configs_run():
    """axolotl's schema defaults gradient_checkpointing to False, but its users run the YAML
    configs of its examples/, which set it true (examples/mistral/qlora.yml): named without
    the setting, an axolotl LoRA or QLoRA is checkpointed as with no stack named, and said
    as the engine's assumption (not as axolotl's default)."""
    lora, lora_b = _gc_assumed("axolotl")
    assert lora == "on" and lora_b == _gc_assumed(None)[1]
    assert _gc_assumed("axolotl", mode="qlora")[0] == "on"
    from advisor.memory.stacks import default_checkpointing

    assert default_checkpointing("axolotl", 1) is None


def test_litgpt_is_read_from_a_question_as_the_case_adapter_reads_it():
    """'litgpt' / 'lit-gpt' name the stack whose defaults data/training_stacks.toml holds
    (LoRA on query and value, no checkpointing on one card), said as LitGPT's."""
    from advisor.parse import parse_query
    from tests.conftest import plain_answer

    for line in ("litgpt lora llama2 7b on a 4090", "lit-gpt lora llama2 7b on a 4090"):
        parsed = parse_query(line)
        assert parsed.workload.framework == "litgpt" and not parsed.ignored
    last = plain_answer("litgpt lora llama2 7b batch 2 seq 512 on a 4090", "en").splitlines()[-1]
    assert "gradient checkpointing off (the default in LitGPT)" in last


def test_a_kohya_full_fine_tune_keeps_the_unet_in_fp32_unless_its_recipe_says_full_bf16():
    """kohya's sdxl_train.py casts the U-Net to 16 bits only under --full_bf16 / --full_fp16
    (data/training_stacks.toml [full_weights]). Expected: named without a format, the full
    fine-tune is sized and said in fp32 (weights = parameters x 4 B), and on a 16 GB card the
    answer is its 24 GB recipe with --full_bf16, in both languages."""
    from advisor.parse import parse_query
    from tests.conftest import plain_answer

    r = estimate(parse_query("kohya sdxl full finetune 4060ti 16g").workload)
    assumed = {a.field: a.value for a in r.assumed}
    assert assumed["weights_format"] == "fp32"
    weights = sum(t.bytes for t in r.estimate.terms if t.name == "weights")
    assert weights > 2.5e9 * 4  # SDXL's 2.6B U-Net in fp32
    en = plain_answer("kohya sdxl full finetune 4060ti 16g", "en")
    zh = plain_answer("kohya sdxl full finetune 4060ti 16g", "zh")
    assert "--full_bf16" in en.split("\n")[2] and "--full_bf16" in zh.split("\n")[2]
    assert "weights in fp32" in en
