"""What a training run brings: an online RL run's generation time, a full fine-tune that
wants several cards, the named trainer's own stated floor for the model; and the host memory
a run loads through (QLoRA's shard-by-shard load, offloaded optimizer or parameters, the
weights read from disk)."""

from __future__ import annotations

from advisor.catalog import GpuSpec, find_format, find_model
from advisor.decode_speed import decode_fit
from advisor.models.choices import Kind, Mode, Offload
from advisor.models.result import EstimateResult
from advisor.pitfalls.pitfall import GIB, gib_text, pitfall
from advisor.types import Option, Pitfall, pitfall_texts

# Post-training methods (Workload.mode values) advisor/memory/rl.py sizes.
RL_MODES = frozenset(("grpo", "dpo", "ppo", "kto", "orpo", "simpo", "rloo"))


def rollout_time(result: EstimateResult, gpu: GpuSpec) -> list[Pitfall]:
    """An online RL run (GRPO, RLOO, PPO): no training time is given, and why; what the
    time goes to (generating G completions per prompt, TRL docs "vLLM integration") and a
    floor for one prompt's group: its completions decode together, one step reading the
    policy's weights once at vLLM's measured decode bandwidth efficiency
    (data/decode_speed.toml), so a group of G x N tokens takes at least N steps."""
    from advisor.memory.rl import framework_facts, method_facts, num_generations

    w, est = result.workload, result.estimate
    if est is None or w.mode.value not in RL_MODES or not method_facts(w.mode)["online"]:
        return []
    _, fw = framework_facts(w.framework)
    completion = w.new_tokens or fw["completion_tokens"]
    weights = est.breakdown.get("weights", 0)
    # vLLM's measured decode efficiency (TRL generates with vLLM when asked to: the floor)
    bandwidth = decode_fit("vllm", gpu).efficiency * gpu.memory_bandwidth_gbs * 1e9
    if weights <= 0 or bandwidth <= 0:
        return []
    step_s = weights / bandwidth
    return [
        pitfall(
            "rl_generation_time",
            g=num_generations(w),
            tokens=completion,
            seconds=f"{completion * step_s:.0f}",
            gpu=gpu.name,
        )
    ]


def stack_floor(result: EstimateResult, gpu: GpuSpec) -> list[Pitfall]:
    """The named trainer's own stated floor for this model family, on a card at or under
    it (data/pitfalls.toml [stack_floor]): its README's setting for such a card."""
    w = result.workload
    floor = pitfall_texts()["stack_floor"]["floors"].get((w.framework or "").lower())
    spec = find_model(w.model) if w.model else None
    if floor is None or spec is None or spec.family not in floor["families"]:
        return []
    if gpu.vram_gb > floor["floor_gb"]:
        return []
    have = gib_text(gpu.usable_vram_gib * GIB)
    return [
        pitfall(
            "stack_floor",
            stack=floor["name"],
            model=result.model.name,
            floor=floor["floor_gb"],
            gpu=gpu.name,
            have=have,
        )
    ]


def diffusers_full_fp32(result: EstimateResult) -> list[Pitfall]:
    """A full fine-tune through diffusers' training scripts: the trained network stays fp32
    (data/training_stacks.toml [full_weights]); what that costs and the README's recipes."""
    w = result.workload
    if (w.framework or "").lower() != "diffusers" or w.mode not in (Mode.full, Mode.pretrain):
        return []
    if result.model.kind != Kind.diffusion or w.weights_format not in (None, "fp32"):
        return []
    return [pitfall("diffusers_full_fp32")]


def loaded_weight_bytes(result: EstimateResult) -> float:
    """What is loaded from disk into RAM: the weights on the cards; for a diffusion pipeline
    every component, wherever it runs (offloaded or streamed ones live in host RAM, and the
    GPU-side terms then show only what is resident)."""
    est, w, model = result.estimate, result.workload, result.model
    assert est is not None
    on_cards = est.breakdown.get("weights", 0) * max(w.num_gpus, 1)
    spec = find_model(model.id) if model.kind == Kind.diffusion and model.id else None
    if spec is None or spec.diffusion is None:
        return on_cards
    d = spec.diffusion
    name = w.weights_format or next(
        (a.value for a in result.assumed if a.field == "weights_format"), "bf16"
    )
    fmt = find_format(name)
    bits = min(fmt.bits if fmt is not None else 16.0, 16.0)
    others = sum(d.text_encoders_params_b) + d.vae_params_b
    return max(on_cards, d.denoiser_params_b * 1e9 * bits / 8 + others * 1e9 * 2)


def qlora_host_ram(result: EstimateResult) -> list[Pitfall]:
    """QLoRA's shard-by-shard load: the host RAM and disk it reads the 16-bit model through."""
    if result.workload.tuning == Mode.qlora:
        return [pitfall("qlora_host_ram", size=gib_text(result.model.params_b * 2e9))]
    return []


def full_finetune_multi_gpu(result: EstimateResult, pick: Option | None) -> list[Pitfall]:
    """A full fine-tune or pre-training of a 3B+ model asked on one card that does not hold
    it alone: what several cards take."""
    w, model = result.workload, result.model
    if (
        w.tuning in (Mode.full, Mode.pretrain)
        and model.params_b >= 3
        and w.num_gpus == 1
        and (pick is None or not pick.fits or pick.count > 1)
    ):
        return [pitfall("full_finetune_multi_gpu", params=f"{model.params_b:g}B")]
    return []


def host_ram(result: EstimateResult) -> list[Pitfall]:
    """The host memory a run needs: the offloaded optimizer or parameters of the whole
    model, else (1B and up, QLoRA aside) the weights loaded from disk."""
    w, model = result.workload, result.model
    offloaded = w.tuning in (Mode.full, Mode.pretrain) and w.cpu_offload in (
        Offload.optimizer,
        Offload.params,
    )
    if offloaded:
        # The host holds the offloaded state of the whole model, not the GPUs' weights.
        kind = w.cpu_offload.value
        texts = pitfall_texts()["host_ram_offload"]
        bpp = texts[f"bytes_per_param_{kind}"]
        what = {"what": {lang: texts[f"what_{lang}_{kind}"] for lang in ("zh", "en")}}
        return [
            pitfall("host_ram_offload", what, size=gib_text(model.params_b * 1e9 * bpp), bpp=bpp)
        ]
    if model.params_b >= 1 and w.tuning != Mode.qlora:
        # QLoRA: qlora_host_ram says what host RAM and disk its shard-by-shard load needs
        return [pitfall("host_ram_disk", size=gib_text(loaded_weight_bytes(result)))]
    return []
