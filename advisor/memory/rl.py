"""Preference and RL post-training (DPO, KTO, ORPO, SimPO, GRPO, RLOO, PPO): the policy's
training terms (advisor/memory/training.py, reused as is) plus what the method keeps beside
it, each a term of its own:

* `reference_model` — a frozen 16-bit copy of the weights, for the KL or the DPO loss;
  absent (and said so) where the method has none (ORPO, SimPO), the KL weight is 0 (TRL's
  GRPO default), the log-probs are precomputed, or LoRA makes the base with its adapter
  disabled the reference (PEFT's `disable_adapter()`, what TRL does with a peft_config);
* `reward_model` — PPO's frozen scorer, `value_model` — PPO's trainable critic (its
  weights, gradients and optimizer state as the policy's);
* `rollout_engine` — where completions come from: a colocated vLLM engine's own weights
  and the KV cache of G completions per prompt, or the policy's own `generate()` KV cache.
  An engine that sleeps while the policy trains (verl, OpenRLHF, TRL's sleep mode), and
  `generate()`, are alive in the generation phase only: the peak is whichever phase is
  larger, never both added.

Methods and frameworks' defaults (TRL, OpenRLHF, verl) with their sources:
data/post_training.toml (research/purchase-serving-rl-hardware.md section 3).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from advisor.catalog import ModelSpec
from advisor.memory.terms import GIB, Breakdown, finish
from advisor.memory.transformer import kv_bytes_per_token
from advisor.models.choices import Mode, Parallelism, Runtime
from advisor.models.estimate import Estimate
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "post_training.toml"
DEFAULT_FRAMEWORK = "trl"
# Adapter recipes: PEFT gets the reference by disabling the adapter on the frozen base.
ADAPTER_MODES = (Mode.lora, Mode.qlora, Mode.dora, Mode.ia3, Mode.prompt_tuning)
# Terms alive only while the policy's forward and backward run (not while it generates).
STEP_TERMS = frozenset(("activations", "logits", "backward_transient", "optimizer_step"))
SHARDING = (Parallelism.zero3, Parallelism.fsdp, Parallelism.tp, Parallelism.pp)


@cache
def table() -> dict[str, Any]:
    with DATA_FILE.open("rb") as fh:
        return tomllib.load(fh)


def method_facts(mode: Mode) -> dict[str, Any]:
    return table()["method"][mode.value]


def framework_facts(framework: str | None) -> tuple[str, dict[str, Any]]:
    """The framework's name and defaults; one the table lacks is read as TRL's."""
    frameworks = table()["framework"]
    name = (framework or DEFAULT_FRAMEWORK).lower()
    if name not in frameworks:
        return DEFAULT_FRAMEWORK, frameworks[DEFAULT_FRAMEWORK]
    facts = frameworks[name]
    # a stack that runs another's trainers (ms-swift over TRL) lists only what it changes
    if "base" in facts:
        facts = {**frameworks[facts["base"]], **facts}
    return name, facts


def num_generations(w: Workload) -> int:
    """G: completions per prompt (1 for the offline methods)."""
    if not method_facts(w.mode)["online"]:
        return 1
    _, fw = framework_facts(w.framework)
    return w.num_generations or fw["num_generations"].get(w.mode.value, 1)


def reference_kept(w: Workload) -> tuple[bool, str]:
    """Whether a separate reference model is loaded, and why not where it is not."""
    method = method_facts(w.mode)
    if w.reference_model is False:
        return False, "none_told"
    if not method["reference"]:
        return False, "none_method"
    _, fw = framework_facts(w.framework)
    if method["online"] and not fw["kl"].get(w.mode.value, True) and not w.reference_model:
        return False, "none_kl0"
    if w.tuning in ADAPTER_MODES:
        return False, "none_adapter"
    return True, "kept"


def policy_workload(w: Workload, acc: Breakdown) -> tuple[Workload, int, int]:
    """The policy's own training run, as training.py sizes it: (that workload, prompt
    tokens, completion tokens). Offline methods put `sequences_per_example` sequences of
    each example through the policy; online ones train on prompt + completion."""
    method = method_facts(w.mode)
    name, fw = framework_facts(w.framework)
    if (w.framework or "").lower() != name:
        acc.assume("rl_framework", name)
    if w.policy_mode is None:
        acc.assume("policy_mode", Mode.lora.value)
    prompt = completion = 0
    if method["online"]:
        prompt = w.prompt_tokens or fw["prompt_tokens"]
        completion = w.new_tokens if w.new_tokens else fw["completion_tokens"]
        seq = w.seq_len or prompt + completion
        if w.prompt_tokens is None or w.new_tokens is None:
            acc.assume("rl_lengths", f"{prompt} + {completion}")
    else:
        seq = w.seq_len or w.context_tokens or fw["preference_max_length"]
        if w.seq_len is None and w.context_tokens is None:
            acc.assume("seq_len", seq)
    # the framework's micro-batch (TRL: 8): of completions for online methods, of preference
    # pairs for DPO
    default = fw.get("train_batch", {}).get(w.mode.value, 1)
    examples = w.batch_size or default
    if w.batch_size is None:
        label = "rl_train_batch" if method["online"] else "rl_pair_batch"
        acc.assume(label if default > 1 else "batch_size", default)
    per = method["sequences_per_example"]
    if per > 1:
        acc.assume("rl_pairs", per)
    update: dict[str, Any] = {
        "mode": w.tuning,
        # the policy's loss reads the completion's logits only (TRL's logits_to_keep)
        "loss_tokens": completion + 1
        if method["online"] and fw.get("base", name) == "trl"
        else None,
        "batch_size": examples * per,
        "seq_len": seq,
        # a training stack named beside the method (Unsloth patches TRL's trainers)
        "framework": w.framework if w.framework and w.framework.lower() != name else name,
    }
    if w.tuning == Mode.qlora and w.weights_format is None:
        update["weights_format"] = "nf4"
    return w.model_copy(update=update), prompt, completion


def estimate_post_training(
    w: Workload, model: ResolvedModel, spec: ModelSpec | None, acc: Breakdown
) -> Estimate:
    from advisor.memory.llm import estimate_transformer  # llm dispatches here: no circle

    base, prompt, completion = policy_workload(w, acc)
    est = estimate_transformer(base, model, spec, acc)
    if acc.terms and acc.terms[-1].name == "runtime_overhead":
        acc.terms.pop()  # finish() adds it again over the new total
    allocated = est.allocated_bytes
    split = w.num_gpus if (base.parallelism in SHARDING or base.parallelism is None) else 1
    copy16 = model.params_b * 1e9 * 2 / split  # a frozen 16-bit copy, sharded like the policy
    cards: dict[str, Any] = {"params_b": round(model.params_b, 3), "cards": split}

    kept, why = reference_kept(w)
    if kept:
        allocated += acc.add(
            "reference_model",
            copy16,
            f"frozen reference: {model.params_b:g}B x 2 B / {split}",
            **cards,
        )
    else:
        acc.assume("reference_model", why)
    method = method_facts(w.mode)
    if method["reward_model"]:
        allocated += acc.add(
            "reward_model",
            copy16,
            f"frozen reward model of the policy's size: {model.params_b:g}B x 2 B / {split}",
            **cards,
        )
    if method["value_model"]:
        # The critic trains as the policy does: its weights, gradients and optimizer state.
        b = est.breakdown
        critic = b.get("weights", 0) + b.get("gradients", 0) + b.get("optimizer", 0)
        allocated += acc.add(
            "value_model",
            critic,
            "trainable critic of the policy's size: weights + gradients + optimizer state",
            **cards,
        )
    if method["online"]:
        allocated = _add_rollout(w, model, acc, allocated, copy16, prompt + completion)
    out = finish(acc, allocated, w, True, (est.band_low_fraction, est.band_high_fraction))
    out.runtime = Runtime.transformers
    return out


def _add_rollout(
    w: Workload,
    model: ResolvedModel,
    acc: Breakdown,
    allocated: int,
    copy16: float,
    tokens: int,
) -> int:
    """The generation phase's memory; the new peak."""
    _, fw = framework_facts(w.framework)
    g = num_generations(w)
    if w.num_generations is None and g > 1:
        acc.assume("num_generations", g)
    where = w.rollout or fw["rollout"]
    if w.rollout is None:
        acc.assume("rollout", where)
    if where == "server":
        return allocated  # vLLM on cards of its own (trl vllm-serve): not on these
    arch = model.arch
    assert arch is not None
    kv = g * tokens * kv_bytes_per_token(arch, "bf16", tokens, None)
    engine = where == "colocate"
    rollout = kv + (copy16 if engine else 0.0)
    values = {
        "sequences": g,
        "tokens": tokens,
        "kv_gib": round(kv / GIB, 2),
        "weights_gib": round(copy16 / GIB, 2) if engine else 0,
    }
    formula = (
        f"vLLM engine: 16-bit weights + KV cache of {g} completions x {tokens} tokens"
        if engine
        else f"generate(): KV cache of {g} completions x {tokens} tokens"
    )
    key = "rollout_engine" if engine else "rollout_engine.generate"
    if engine and not fw["sleep"]:
        # A colocated engine that never sleeps holds its share through the training step.
        return allocated + acc.add("rollout_engine", rollout, formula, key=key, **values)
    # Generation and training take turns: the peak is the larger phase.
    step = sum(t.bytes for t in acc.terms if t.name in STEP_TERMS)
    resident = allocated - step
    if resident + rollout <= allocated:
        acc.assume("rl_peak", "rl_training")
        return allocated
    acc.terms[:] = [t for t in acc.terms if t.name not in STEP_TERMS]
    acc.assume("rl_peak", "rl_generation")
    return resident + acc.add("rollout_engine", rollout, formula, key=key, **values)
