"""How fast a setup runs: decode bounded by memory bandwidth, prefill and training by
compute. Constants and their sources are in data/capabilities.toml ([speed],
[interconnect])."""

from __future__ import annotations

from advisor.catalog import GpuSpec
from advisor.models import EstimateResult, Kind, Mode
from advisor.recommend.constraints import allreduce_latency_s, nvlinked, speed_constants
from advisor.recommend.options import Option

DEFAULT_LAYERS = 32  # a model without a known architecture: a 7B-class depth


def decode_step_s(result: EstimateResult, gpu: GpuSpec, count: int) -> float:
    """Seconds per decode step (one token for every request in the batch).

    Each card reads its shard of the active weights and the KV cache once per step; MoE
    reads only the routed experts but at a lower effective bandwidth (scattered reads);
    every layer adds a fixed launch cost, and with several cards two all-reduces whose
    latency depends on the link (NVLink vs PCIe), plus for MoE a dispatch / combine of each
    token to its routed experts per layer."""
    c = speed_constants()
    model, est = result.model, result.estimate
    assert est is not None
    weights = est.breakdown.get("weights", 0)
    kv = est.breakdown.get("kv_cache", 0)
    share = model.active_params_b / max(model.params_b, 1e-9)  # of the weights read per step
    moe = model.arch is not None and bool(model.arch.experts) and share < 1
    eff = c["decode_bandwidth_efficiency"]
    if moe:
        share, loaded = _moe_read_share(result, share)
        # Scattered expert reads are slower than one dense matmul; the more experts a step
        # loads, the closer to dense.
        eff = c["moe_bandwidth_efficiency"] + (eff - c["moe_bandwidth_efficiency"]) * loaded
    bandwidth = gpu.memory_bandwidth_gbs * 1e9
    read_s = (weights * share + kv) / (eff * bandwidth)
    layers = model.arch.layers if model.arch else DEFAULT_LAYERS
    step = read_s + layers * c["layer_overhead_us"] * 1e-6
    par = result.workload.parallelism
    assumed = next((a.value for a in result.assumed if a.field == "parallelism"), None)
    if count > 1 and (par.value if par is not None else assumed) == "layer":
        # llama.cpp's layer split: the cards take turns, each reading its layers; one
        # activation copy per card boundary, no all-reduce.
        step += read_s * (count - 1)
    elif count > 1:
        step += layers * 2 * allreduce_latency_s(gpu, count)
        if moe:
            # Each MoE layer sends every token to its routed experts on other cards and back.
            k = model.arch.experts_per_token or 1  # type: ignore[union-attr]
            step += layers * k * c["moe_dispatch_us_per_expert"] * 1e-6
    return step


def _moe_read_share(result: EstimateResult, active_share: float) -> tuple[float, float]:
    """Share of the weights one decode step reads, and the share of experts it loads.

    A step over `batch` tokens reads every expert any token routes to: E x (1 - (1 - k/E)^b)
    distinct experts per layer, not k (expert loading). Attention, embeddings and shared
    experts are read once whatever the batch."""
    model, w = result.model, result.workload
    arch = model.arch
    assert arch is not None and arch.experts
    k = arch.experts_per_token or 1
    e = arch.experts
    batch = w.concurrency or w.batch_size or 1
    loaded = e * (1 - (1 - k / e) ** batch)
    if not arch.moe_intermediate:
        return min(1.0, active_share * loaded / k), loaded / e
    expert_params = arch.layers * 3 * arch.hidden * arch.moe_intermediate  # one expert, all layers
    always = max(model.active_params_b * 1e9 - k * expert_params, 0.0)
    read = always + loaded * expert_params
    return min(1.0, read / (model.params_b * 1e9)), loaded / e


def speed_fields(result: EstimateResult, gpu: GpuSpec, count: int) -> dict[str, float | int]:
    """The speed fields of an `Option` for this workload on `count` cards of `gpu`, by name
    (rank.option builds the option once with them)."""
    opt: dict[str, float | int] = {}
    c = speed_constants()
    w, model, est = result.workload, result.model, result.estimate
    if est is None or gpu.memory_bandwidth_gbs <= 0:
        return opt  # a card known only by its memory size: no speed claimed
    if model.kind == Kind.llm and not w.mode.is_training:
        step = decode_step_s(result, gpu, count)
        batch = w.concurrency or w.batch_size or 1
        opt["concurrency"] = batch
        opt["decode_tokens_per_s"] = round(1 / step, 1)
        opt["decode_total_tokens_per_s"] = round(batch / step, 1)
        prompt = w.prompt_tokens or w.context_tokens or 4096
        flops = 2 * model.active_params_b * 1e9 * prompt * batch
        opt["prefill_s"] = round(
            flops / (gpu.dense_tflops * 1e12 * count * c["prefill_efficiency"]), 2
        )
    elif w.mode.is_training and model.kind in (Kind.llm, Kind.classic, Kind.diffusion):
        tokens = w.train_tokens
        if tokens is None:
            return opt
        datacenter = gpu.segment == "datacenter" and gpu.has_nvlink
        mfu = c["mfu_datacenter"] if datacenter else c["mfu_consumer"]
        if count > 1 and not nvlinked(gpu, count):
            mfu *= c["mfu_pcie_multi_card"]
        full = w.mode in (Mode.full, Mode.pretrain)
        # Adapters skip the weight-gradient matmuls: about 2/3 of a full step's FLOPs.
        share = 1.0 if full else 2 / 3
        flops = 6 * model.active_params_b * 1e9 * tokens * share
        opt["train_hours"] = round(flops / (count * gpu.dense_tflops * 1e12 * mfu) / 3600, 2)
    elif model.kind == Kind.diffusion:
        # Coarse: 2 x denoiser FLOPs per latent token per step, 50% utilisation.
        steps = w.denoise_steps or 30
        tokens = (w.image_width or 1024) * (w.image_height or 1024) / 64 / 4
        flops = 2 * model.params_b * 0.5e9 * tokens * steps * 2
        opt["images_per_min"] = round(60 / (flops / (gpu.dense_tflops * 1e12 * 0.5)), 1)
    return opt


def speed_key(o: Option, gpu: GpuSpec) -> float:
    """One number to compare setups by speed (higher is faster)."""
    if o.train_hours:
        return 1 / o.train_hours
    if o.decode_total_tokens_per_s:
        return o.decode_total_tokens_per_s
    if o.images_per_min:
        return o.images_per_min
    return gpu.dense_tflops * o.count
