"""Preference and RL post-training (DPO, KTO, ORPO, SimPO, GRPO, RLOO, PPO): the policy's
training terms plus what each method keeps beside it (advisor/memory/rl.py), with the
frameworks' defaults (advisor/data/post_training.toml) stated."""

import pytest

from advisor import Workload, estimate
from advisor.memory.rl import framework_facts, table
from advisor.models.choices import Mode
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.recommend.fix_candidates import costlier_fixes
from advisor.render import render

QWEN7 = "qwen2.5-7b"


def _run(**kw):  # noqa: ANN003, ANN202
    r = estimate(Workload(model=QWEN7, **kw))
    assert r.estimate is not None
    return r, r.estimate.breakdown, {a.field: a.value for a in r.assumed}


def test_grpo_under_trl_defaults_loads_no_reference_and_says_why() -> None:
    _, terms, assumed = _run(mode="grpo")
    assert "reference_model" not in terms
    assert assumed["reference_model"] == "none_kl0"  # GRPOConfig.beta = 0.0
    assert assumed["num_generations"] == "8" and assumed["rollout"] == "generate"
    assert assumed["policy_mode"] == "lora" and assumed["rl_framework"] == "trl"


def test_full_dpo_adds_a_frozen_16bit_reference_and_lora_dpo_uses_the_base() -> None:
    r, full, _ = _run(mode="dpo", policy_mode="full")
    assert full["reference_model"] == int(r.model.params_b * 1e9 * 2)
    _, lora, assumed = _run(mode="dpo")
    assert "reference_model" not in lora and assumed["reference_model"] == "none_adapter"
    _, told, assumed = _run(mode="dpo", policy_mode="full", reference_model=False)
    assert "reference_model" not in told and assumed["reference_model"] == "none_told"


def test_orpo_and_simpo_keep_no_reference_even_in_a_full_fine_tune() -> None:
    for method in ("orpo", "simpo"):
        _, terms, assumed = _run(mode=method, policy_mode="full")
        assert "reference_model" not in terms and assumed["reference_model"] == "none_method"


def test_dpo_puts_chosen_and_rejected_through_the_policy_in_one_forward() -> None:
    """A DPO example is two sequences: its activations and logits are a batch of 2's."""
    _, dpo, assumed = _run(mode="dpo", batch_size=1, seq_len=1024)
    _, sft, _ = _run(mode="lora", batch_size=2, seq_len=1024, framework="trl")
    assert dpo["activations"] == sft["activations"] and dpo["logits"] == sft["logits"]
    assert assumed["rl_pairs"] == "2"


def test_ppo_holds_a_reward_model_and_a_trained_critic() -> None:
    r, ppo, _ = _run(mode="ppo", policy_mode="full", num_gpus=8, parallelism="zero3")
    _, grpo, _ = _run(mode="grpo", policy_mode="full", num_gpus=8, parallelism="zero3")
    assert {"reference_model", "reward_model", "value_model"} <= ppo.keys()
    # the critic trains: its weights, gradients and optimizer state as the policy's
    assert ppo["value_model"] == ppo["weights"] + ppo["gradients"] + ppo["optimizer"]
    ppo_total = estimate(Workload(model=QWEN7, mode="ppo", policy_mode="full", num_gpus=8))
    grpo_total = estimate(Workload(model=QWEN7, mode="grpo", policy_mode="full", num_gpus=8))
    assert ppo_total.estimate.total_bytes > 1.5 * grpo_total.estimate.total_bytes  # type: ignore[union-attr]
    assert "reward_model" not in grpo and "value_model" not in grpo


def test_a_colocated_vllm_engine_holds_its_own_weights_through_the_training_step() -> None:
    r, terms, _ = _run(mode="grpo", rollout="colocate")
    _, plain, _ = _run(mode="grpo")
    weights16 = r.model.params_b * 1e9 * 2
    assert terms["rollout_engine"] > weights16  # its weights + the KV of 8 completions
    assert terms["activations"] == plain["activations"]  # both alive: TRL sleeps no engine


def test_verl_and_openrlhf_engines_sleep_so_the_peak_is_one_phase_not_both() -> None:
    for fw in ("verl", "openrlhf"):
        _, terms, assumed = _run(mode="grpo", framework=fw)
        assert framework_facts(fw)[1]["sleep"] is True
        assert "rollout_engine" in terms and assumed["rl_peak"] == "rl_generation"
        assert "activations" not in terms and "logits" not in terms  # freed in generation


def test_the_rollout_kv_cache_grows_with_the_completions_per_prompt() -> None:
    _, g4, _ = _run(mode="grpo", rollout="colocate", num_generations=4)
    _, g16, _ = _run(mode="grpo", rollout="colocate", num_generations=16)
    kv4 = g4["rollout_engine"] - g4["weights"]
    kv16 = g16["rollout_engine"] - g16["weights"]
    assert 3.9 < kv16 / kv4 < 4.1


def test_every_framework_default_carries_its_source_and_date() -> None:
    for section in ("method", "framework"):
        for name, row in table()[section].items():
            assert row["source"] and row["read_date"].startswith("2026-"), name


def test_the_parser_reads_the_method_beside_the_policys_recipe() -> None:
    q = parse_query("qlora dpo qwen2.5-14b").workload
    assert q.mode == Mode.dpo and q.policy_mode == Mode.qlora and q.weights_format == "nf4"
    g = parse_query("grpo qwen2.5-7b with vllm").workload
    assert g.mode == Mode.grpo and g.rollout == "colocate" and g.runtime is None
    full = parse_query("全参 GRPO qwen2.5-7b 8卡").workload
    assert full.mode == Mode.grpo and full.policy_mode == Mode.full
    trained = parse_query("GRPO 训练 qwen2.5-7b").workload  # "训练" alone is no recipe
    assert trained.mode == Mode.grpo and trained.policy_mode is None
    assert parse_query("verl grpo qwen2.5-7b").workload.framework == "verl"
    assert parse_query("rlhf llama3-8b").workload.mode == Mode.ppo


def test_a_fix_changes_the_policys_recipe_and_keeps_the_method() -> None:
    r = estimate(Workload(model=QWEN7, mode="dpo", policy_mode="full"))
    fixes = dict(costlier_fixes(r))
    lora = fixes["lora"]()
    assert lora.mode == Mode.dpo and lora.policy_mode == Mode.lora
    qlora = fixes["qlora"]()
    assert qlora.mode == Mode.dpo and qlora.policy_mode == Mode.qlora


def test_a_colocated_engine_gets_the_share_of_the_picked_card_it_needs() -> None:
    from advisor.recommend import recommend_query

    rec = recommend_query(parse_query("grpo qwen2.5-7b with vllm on a100 80g sxm"), "USD")
    notes = {p.code: p for p in rec.named.notes}  # type: ignore[union-attr]
    share = notes["rl_vllm_share"]
    assert share.params["flag"] == "vllm_gpu_memory_utilization"
    engine = rec.result.estimate.breakdown["rollout_engine"]  # type: ignore[union-attr]
    # the share given is enough for the engine, rounded up to 0.05
    assert float(share.params["util"]) * 80e9 >= engine
    assert float(share.params["util"]) - 0.05 < engine / 80e9 + 0.05
    plain = recommend_query(parse_query("grpo qwen2.5-7b on a100 80g sxm"), "USD")
    assert "rl_vllm_share" not in {p.code for p in plain.named.notes}  # type: ignore[union-attr]


def test_an_online_rl_answer_says_time_is_not_estimated_and_that_generation_dominates() -> None:
    """Before: "GRPO qwen2.5-7b trl 几张卡" said nothing about time."""
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    parsed = parse_query("GRPO qwen2.5-7b trl 几张卡")
    rec = recommend_query(parsed, "CNY")
    notes = [p for p in rec.pitfalls if p.code == "rl_generation_time"]
    assert notes and notes[0].params["g"] == "8" and notes[0].params["tokens"] == "512"
    # a floor: 512 decode steps each reading ~14 GiB of bf16 weights at 55% of 936 GB/s
    assert 10 <= float(notes[0].params["seconds"]) <= 25
    zh = render("answer", "zh", plain=True, rec=rec, parsed=parsed)
    assert "训练时间没有估算" in zh and "生成" in zh
    en = render("answer", "en", plain=True, rec=rec, parsed=parsed)
    assert "Training time is not estimated" in en
    # offline methods generate nothing: no such note
    dpo = recommend_query(parse_query("dpo qwen2.5-7b 3090"), "CNY")
    assert all(p.code != "rl_generation_time" for p in dpo.pitfalls)


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("用trl跑grpo qwen2.5-7b 要几张卡", "zh"),
        ("grpo qwen2.5-7b trl on a 3090", "en"),
        ("rloo 训练 qwen2.5-7b lora", "zh"),
    ],
)
def test_trl_online_rl_trains_its_default_eight_completions_with_completion_logits(
    line: str, lang: str
) -> None:
    """TRL's GRPOConfig / RLOOConfig leave per_device_train_batch_size at TrainingArguments'
    8 completions, and the policy's loss reads only the completion's logits (logits_to_keep)
    as 16-bit log-probs: batch 8 is stated and sized, the logits are 8 x 513 tokens x the
    vocabulary x 6 B, and a smaller micro-batch with accumulation is offered where that is
    tight."""
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    r = rec.setup or rec.result
    assumed = {a.field: a.value for a in r.assumed}
    assert assumed.get("rl_train_batch") == "8", assumed
    assert "batch_size" not in assumed
    logits = next(t for t in r.estimate.terms if t.name == "logits")
    vocab = r.model.arch.vocab
    assert logits.bytes == pytest.approx(8 * 513 * vocab * 6, rel=0.01)
    text = render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)
    assert "per_device_train_batch_size=8" in text
    if rec.verdict is not None and rec.verdict.state in ("tight", "no_fit"):
        assert any("batch:" in f for f in [*rec.fixes, rec.verdict.fix or ""]), rec.fixes


def test_a_batch_named_for_grpo_is_kept() -> None:
    r = estimate(parse_query("grpo qwen2.5-7b trl batch 2").workload)
    assumed = {a.field for a in r.assumed}
    assert "rl_train_batch" not in assumed and "batch_size" not in assumed
    logits = next(t for t in r.estimate.terms if t.name == "logits")
    assert logits.bytes == pytest.approx(2 * 513 * r.model.arch.vocab * 6, rel=0.01)


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("DPO full finetune mistral-7b, how many A100 80GB do I need", "en"),
        ("用 trl 做 dpo 全参 mistral-7b 需要几张 a100", "zh"),
        ("dpo qwen2.5-7b lora on a 4090", "en"),
    ],
)
def test_trl_dpo_is_sized_with_its_default_eight_pairs_and_says_so(line: str, lang: str) -> None:
    """TRL's DPOConfig leaves per_device_train_batch_size at TrainingArguments' 8 (as GRPO
    does): 8 preference pairs (16 sequences) are sized and said, never "TRL defaults" beside
    batch 1; the grid's heading names the same batch."""
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    r = rec.setup or rec.result
    assumed = {a.field: a.value for a in r.assumed}
    assert assumed.get("rl_pair_batch") == "8", assumed
    assert "batch_size" not in assumed
    text = render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)
    assert "per_device_train_batch_size=8" in text
    assert "batch 1," not in text and "批大小 1，" not in text
    if rec.verdict is not None and rec.verdict.state in ("tight", "no_fit"):
        assert any("batch:" in f for f in [*rec.fixes, rec.verdict.fix or ""]), rec.fixes


@pytest.mark.parametrize(
    "question",
    [
        "ms-swift dpo lora 训练 qwen2.5-7b-instruct 单卡 rtx5000 ada 32g 够不够",
        "ms-swift dpo lora qwen2.5-7b-instruct on one rtx 5000 ada 32gb, enough?",
    ],
)
def test_ms_swift_preference_training_keeps_its_own_batch_of_one(question: str) -> None:
    """ms-swift's TrainArgumentsMixin: per_device_train_batch_size = 1 (TRL's DPOConfig
    leaves TrainingArguments' 8). Before: sized at 8 pairs, ~55 GiB, "does not fit 32 GB"
    as asked; ms-swift's own DPO example is ~24 GiB at 2k tokens."""
    name, facts = framework_facts("ms-swift")
    assert name == "ms-swift" and facts["train_batch"]["dpo"] == 1
    assert facts["preference_max_length"] == framework_facts("trl")[1]["preference_max_length"]
    rec = recommend_query(parse_query(question), "USD")
    assumed = {a.field: a.value for a in rec.result.assumed}
    assert assumed.get("batch_size") == "1"
    assert rec.result.estimate.total_bytes < 0.9 * 32e9  # type: ignore[union-attr]
