"""How fast a setup runs: decode bounded by memory bandwidth (fitted per runtime to measured
runs, data/decode_speed.toml via advisor/decode_speed.py), prefill and training by compute.
Other constants and their sources are in data/capabilities.toml ([speed], [interconnect])."""

from __future__ import annotations

from typing import NamedTuple

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.constraints import (
    allreduce_latency_s,
    card_mfu_scale,
    nvlinked,
    speed_constants,
)
from advisor.decode_speed import DecodeFit, decode_fit, host_read_gbs
from advisor.memo import ByIdentity
from advisor.memory import tts
from advisor.models.choices import Kind, Mode
from advisor.models.result import EstimateResult
from advisor.recommend.offload_speed import offload_bytes_per_image, offload_seconds
from advisor.throughput import (
    diffusion_anchor,
    diffusion_speed_of,
    images_per_s,
    multi_card_efficiency,
)
from advisor.types import Option
from advisor.video_speed import Clip

DEFAULT_LAYERS = 32  # a model without a known architecture: a 7B-class depth


def decode_step_s(result: EstimateResult, gpu: GpuSpec, count: int) -> float:
    """Seconds per decode step (one token for every request in the batch).

    Each card reads its shard of the active weights and the KV cache once per step; MoE
    reads only the routed experts but at a lower effective bandwidth (scattered reads);
    every layer adds a fixed launch cost, and with several cards two all-reduces whose
    latency depends on the link (NVLink vs PCIe), plus for MoE a dispatch / combine of each
    token to its routed experts per layer."""
    return _decode_step(_decode_facts(result), card_speed(gpu), count)


class CardSpeed(NamedTuple):
    """What `speed_row` reads of a card, worked out once per card (advisor.memo): the
    search over cards weighs every card at several counts for every question."""

    gpu: GpuSpec
    bandwidth: float  # bytes/s; 0: a card known only by its memory size (no speed claimed)
    dense_tflops: float  # gpu.dense_tflops
    flops: float  # dense 16-bit FLOP/s (dense_tflops x 1e12)
    by_count: dict[int, tuple[float, float]]  # count -> (all-reduce latency s, MFU), as asked
    fits: dict[str | None, DecodeFit]  # runtime -> its decode fit on this card, as asked


# Per-card speed constants (advisor.memo): a function of the card and capabilities.toml.
_CARD_SPEED: ByIdentity[CardSpeed] = ByIdentity("card_speed", 512, table=True)


def card_speed(gpu: GpuSpec) -> CardSpeed:
    def row() -> CardSpeed:
        dense = gpu.dense_tflops
        return CardSpeed(gpu, gpu.memory_bandwidth_gbs * 1e9, dense, dense * 1e12, {}, {})

    return _CARD_SPEED.of(gpu, row)


def _links(card: CardSpeed, count: int) -> tuple[float, float]:
    """(all-reduce latency in seconds, training MFU) of `count` of this card."""
    links = card.by_count.get(count)
    if links is None:
        gpu = card.gpu
        links = card.by_count[count] = (allreduce_latency_s(gpu, count), train_mfu(gpu, count))
    return links


def _fit(card: CardSpeed, runtime: str | None) -> DecodeFit:
    """The runtime's decode fit on this card (advisor/decode_speed.py)."""
    fit = card.fits.get(runtime)
    if fit is None:
        fit = card.fits[runtime] = decode_fit(runtime, card.gpu)
    return fit


def train_mfu(gpu: GpuSpec, count: int) -> float:
    """Model FLOPs utilisation of a training step: datacenter NVLink boards reach more than
    consumer cards, and several cards without NVLink lose more to PCIe."""
    c = speed_constants()
    datacenter = gpu.segment == "datacenter" and gpu.has_nvlink
    mfu = c["mfu_datacenter"] if datacenter else c["mfu_consumer"]
    scale = card_mfu_scale().get(gpu.id)
    if scale is not None:  # a measured matmul ceiling below H100's share of its peak
        mfu = c["mfu_datacenter"] * scale["matmul_efficiency"]
        mfu /= scale["reference_matmul_efficiency"]
    if count > 1 and not nvlinked(gpu, count):
        mfu *= c["mfu_pcie_multi_card"]
    return mfu


class _Decode(NamedTuple):
    """What a decode step reads that is the same on every card (`decode_step_s`)."""

    read_bytes: float  # active weights x share read + KV cache, per card
    runtime: str | None  # whose measured decode speed applies (data/decode_speed.toml)
    moe_loaded: float | None  # MoE: the share of experts a step loads; None: dense
    layers: int
    layer_split: bool  # llama.cpp's layer split: the cards take turns
    moe_dispatch_s: float | None  # per step and layer x k, for MoE under a split; else None
    cpu_share: float = 0.0  # llama.cpp partial offload (-ngl): the share of layers on the CPU


def _decode_facts(result: EstimateResult) -> _Decode:
    c = speed_constants()
    model, est = result.model, result.estimate
    assert est is not None
    breakdown = est.breakdown
    on_gpu = result.workload.n_gpu_layers
    layers = model.arch.layers if model.arch else DEFAULT_LAYERS
    if on_gpu is not None and on_gpu < layers:
        # -ngl: the breakdown holds the card's layers; a token reads them all
        from advisor.memory import estimate

        whole = estimate(result.workload.model_copy(update={"n_gpu_layers": None})).estimate
        breakdown = whole.breakdown if whole is not None else breakdown
    weights = breakdown.get("weights", 0)
    kv = breakdown.get("kv_cache", 0)
    share = model.active_params_b / max(model.params_b, 1e-9)  # of the weights read per step
    moe = model.arch is not None and bool(model.arch.experts) and share < 1
    loaded = None
    if moe:
        share, loaded = _moe_read_share(result, share)
    par = result.workload.parallelism
    assumed = next((a.value for a in result.assumed if a.field == "parallelism"), None)
    return _Decode(
        read_bytes=weights * share + kv * (1 + transformers_kv_copies(result)),
        runtime=getattr(est.runtime, "value", est.runtime),
        moe_loaded=loaded,
        layers=layers,
        layer_split=_runs_one_card_at_a_time(result, par.value if par is not None else assumed),
        # Each MoE layer sends every token to its routed experts on other cards and back.
        moe_dispatch_s=(
            layers * (model.arch.experts_per_token or 1) * c["moe_dispatch_us_per_expert"] * 1e-6  # type: ignore[union-attr]
            if moe
            else None
        ),
        cpu_share=(layers - on_gpu) / layers if on_gpu is not None and on_gpu < layers else 0.0,
    )


def transformers_kv_copies(result: EstimateResult) -> float:
    """The KV cache's extra passes per decode step in transformers' generate(), in cache
    sizes, over the one read every engine makes. DynamicCache.update appends the new token
    with torch.cat (cache_utils.py DynamicLayer.update): the whole cache is read and written
    again, 2 passes. Without a kernel that reads grouped KV heads itself (FlashAttention-2
    does), repeat_kv expands K and V to every query head before attention (integrations/
    sdpa_attention.py and eager_attention_forward; GLM-4's own modeling_chatglm.py expands
    with .expand().contiguous()): written and read at heads / kv_heads times the cache,
    2 x groups passes. At 128k this is what a decode step mostly does: GLM-4-9B bf16 on an
    A100 reads 5 GiB of cache 34 times a token (THUDM/GLM-4 basic_demo/README.md,
    transformers on an A100: 14.4 tok/s at 32k, 3.4 at 128k; this gives ~17 and ~7, where
    one read gave ~30 at both). A static cache (cache_implementation="static") is written
    in place: no torch.cat."""
    est, w = result.estimate, result.workload
    runtime = getattr(est.runtime, "value", est.runtime) if est is not None else None
    if runtime != "transformers" or w.mode.is_training:
        return 0.0
    copies = 0.0 if w.static_cache else 2.0
    arch = result.model.arch
    groups = arch.heads / arch.kv_heads_ if arch is not None else 1.0
    attention = w.attention or next(
        (a.value for a in result.assumed if a.field == "attention"), None
    )
    if groups > 1 and getattr(attention, "value", attention) != "flash":
        copies += 2 * groups
    return copies


def _runs_one_card_at_a_time(result: EstimateResult, split: str | None) -> bool:
    """A split by whole layers: llama.cpp's layer split, a pipeline, and plain transformers
    (device_map="auto", its "tp" being layers per card) when generating. The cards take
    turns on each token, so a token reads the whole model at one card's bandwidth."""
    runtime = result.estimate.runtime if result.estimate is not None else None
    hf_split = (
        split == "tp"
        and getattr(runtime, "value", runtime) == "transformers"
        and not result.workload.mode.is_training
    )
    return split in ("layer", "pp") or hf_split


def _decode_step(d: _Decode, card: CardSpeed, count: int) -> float:
    fit = _fit(card, d.runtime)
    eff = fit.efficiency
    if d.moe_loaded is not None:
        # Scattered expert reads are slower than one dense matmul; the more experts a step
        # loads, the closer to dense.
        moe = speed_constants()["moe_bandwidth_efficiency"]
        eff = moe + (eff - moe) * d.moe_loaded
    read_s = d.read_bytes / (eff * card.bandwidth)
    if d.cpu_share:
        # -ngl: the layers left on the CPU are read from system RAM (decode_speed.toml
        # [host_offload]), the rest at the card's bandwidth, one after the other
        host = host_read_gbs() * 1e9
        read_s = read_s * (1 - d.cpu_share) + d.read_bytes * d.cpu_share / host
    step = read_s + d.layers * fit.layer_s
    if count > 1 and d.layer_split:
        # a split by layers (llama.cpp, pipeline, transformers device_map="auto"): the
        # cards take turns, each reading its layers; one activation copy per card boundary,
        # no all-reduce.
        step += read_s * (count - 1)
    elif count > 1:
        step += d.layers * 2 * _links(card, count)[0]
        if d.moe_dispatch_s is not None:
            step += d.moe_dispatch_s
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


class _Speed(NamedTuple):
    """What the speed fields read of a workload that is the same on every card."""

    kind: str  # decode | train | vision | images | audio | none
    decode: _Decode | None = None
    batch: int = 1
    flops: float = 0.0  # prefill (decode), the whole job (train), one image (images), or
    # the images a vision training run processes (vision: dataset x epochs)
    full: bool = False
    model_id: str | None = None  # vision: the model whose published throughput is read
    input_px: int = 0  # vision: the longer side of the training images
    runtime: str | None = None  # audio: the runtime or framework that transcribes
    weight_bytes: float = 2.0  # audio: bytes per weight the decode reads (fp16 measured)
    offload: tuple[str, float] = ("", 0.0)  # images: CPU offload mode, bytes moved per image
    clip: Clip | None = None  # video: the clip asked (frames, size, steps, clips)


# Speed facts by estimate (advisor.memo): a recommendation judges each estimate on every card.


def _clip_of(result: EstimateResult) -> Clip | None:
    """The clip a video estimate is for: frames and size as asked or as the estimate
    assumed them, the steps asked (None: the measured run's), the clips per prompt."""
    w = result.workload
    said = {a.field: a.value for a in result.assumed}
    frames = w.video_frames or int(said.get("video_frames") or 0)
    size = str(said.get("resolution") or "").split("x")
    width = w.image_width or (int(size[0]) if len(size) == 2 and size[0].isdigit() else 0)
    height = w.image_height or (int(size[1]) if len(size) == 2 and size[1].isdigit() else 0)
    if not (frames and width and height):
        return None
    clips = w.batch_size or int(said.get("videos") or 1)
    return Clip(frames, width, height, w.denoise_steps, clips)


def _speed_facts(result: EstimateResult) -> _Speed:
    w, model, est = result.workload, result.model, result.estimate
    if est is None:
        return _Speed("none")
    spec = catalog.models().get(model.id or "")
    if spec is not None and spec.family == "whisper" and not w.mode.is_training:
        # transcription: a real-time factor from a published benchmark (audio_speed.py),
        # not tokens per second
        runtime = w.framework or (est.runtime.value if est.runtime else None)
        fmt = catalog.find_format(w.weights_format or "")
        return _Speed(
            "audio",
            batch=w.batch_size or 1,
            model_id=model.id,
            runtime=runtime,
            weight_bytes=fmt.bits / 8 if fmt is not None else 2.0,
        )
    if tts.non_autoregressive(model.id) and not w.mode.is_training:
        # a flow-matching TTS model makes the whole utterance at once: its speed is a
        # real-time factor no catalog figure gives here, never tokens per second
        return _Speed("none")
    if model.kind == Kind.llm and not w.mode.is_training:
        batch = w.concurrency or w.batch_size or 1
        prompt = w.prompt_tokens or w.context_tokens or 4096
        flops = 2 * model.active_params_b * 1e9 * prompt * batch
        return _Speed("decode", _decode_facts(result), batch, flops)
    if w.mode.is_training and w.train_images and model.kind == Kind.classic:
        # dataset x epochs at the published images/s of this model (advisor/throughput.py)
        px = max(w.image_width or 0, w.image_height or 0)
        return _Speed("vision", flops=float(w.train_images), model_id=model.id, input_px=px)
    if w.mode.is_training and model.kind in (Kind.llm, Kind.classic, Kind.diffusion):
        tokens = w.train_tokens
        if tokens is None:
            return _Speed("none")
        full = w.tuning in (Mode.full, Mode.pretrain)
        # Adapters skip the weight-gradient matmuls: about 2/3 of a full step's FLOPs.
        share = 1.0 if full else 2 / 3
        flops = 6 * model.active_params_b * 1e9 * tokens * share
        return _Speed("train", flops=flops, full=full)
    video = w.video_frames or any(
        a.field in ("video_frames", "section_frames") for a in result.assumed
    )
    if model.kind == Kind.diffusion and video:
        # The image formula below counts one frame (Wan2.1's 81 frames read "~1.0 images/min"
        # beside "81 video frames"): a clip is timed from the makers' measured seconds per
        # clip (advisor/video_speed.py), or not at all
        clip = _clip_of(result)
        return _Speed("video", model_id=model.id, clip=clip) if clip else _Speed("none")
    if model.kind == Kind.diffusion:
        # Coarse: 2 x denoiser FLOPs per latent token per step, 50% utilisation. The
        # denoiser's parameters only: the text encoders (FLUX's 4.8B T5) run once per
        # prompt, not at every step (was the whole pipeline's: FLUX-dev 16.9B for 11.9B).
        steps = w.denoise_steps or 30
        latent_tokens = (w.image_width or 1024) * (w.image_height or 1024) / 64 / 4
        spec = catalog.models().get(model.id or "")
        denoiser_b = spec.diffusion.denoiser_params_b if spec and spec.diffusion else None
        flops = 2 * (denoiser_b or model.params_b) * 1e9 * latent_tokens * steps
        return _Speed("images", flops=flops, offload=offload_bytes_per_image(result, steps))
    return _Speed("none")


def speed_facts(result: EstimateResult) -> _Speed:
    """What the speed fields read of an estimate that is the same on every card (kind "none"
    without an estimate): the search over cards reads it once per card count."""
    return _speed_facts(result)


# Option's speed fields in its order: decode_tokens_per_s, decode_total_tokens_per_s,
# concurrency, prefill_s, train_hours, images_per_min (rank.option_from unpacks it).
SpeedRow = tuple[float | None, float | None, int, float | None, float | None, float | None]
NO_SPEED: SpeedRow = (None, None, 1, None, None, None)


def speed_row(f: _Speed, card: CardSpeed, count: int) -> SpeedRow:
    """Option's speed fields for this estimate's `speed_facts` on `count` cards of a card
    (`card_speed`; `NO_SPEED`: a card known only by its memory size, or no speed for the
    job)."""
    if card.bandwidth <= 0:
        return NO_SPEED  # a card known only by its memory size: no speed claimed
    kind = f.kind
    if kind == "decode":
        assert f.decode is not None
        step = _decode_step(f.decode, card, count)
        batch = f.batch
        working = 1 if f.decode.layer_split else count  # a layer split: one card at a time
        prefill = f.flops / (card.flops * working * speed_constants()["prefill_efficiency"])
        return (round(1 / step, 1), round(batch / step, 1), batch, round(prefill, 2), None, None)
    if kind == "train":
        mfu = _links(card, count)[1]
        hours = round(f.flops / (count * card.dense_tflops * 1e12 * mfu) / 3600, 2)
        return (None, None, 1, None, hours, None)
    if kind == "vision":
        rate = images_per_s(f.model_id, card.gpu, f.input_px)
        if rate is None:
            return NO_SPEED  # nothing published covers this model: no time claimed
        per_s = rate.images_per_s * count * (multi_card_efficiency() if count > 1 else 1.0)
        return (None, None, 1, None, round(f.flops / per_s / 3600, 2), None)
    if kind == "images":
        # The FLOPs at 50% of an RTX 3090's 16-bit peak, moved to this card by diffusers'
        # measured ratio (advisor/throughput.py diffusion_speed_of), not by tensor specs;
        # plus the weights CPU offload moves over PCIe (offload_speed.py)
        anchor = catalog.gpus()[diffusion_anchor()]
        per_s = anchor.dense_tflops * 1e12 * 0.5 * diffusion_speed_of(card.gpu.id)
        seconds = f.flops / per_s + offload_seconds(*f.offload, card.gpu)
        images = round(60 / seconds, 1)
        return (None, None, 1, None, None, images)
    return NO_SPEED


def speed_key(o: Option, gpu: GpuSpec) -> float:
    """One number to compare setups by speed (higher is faster)."""
    if o.train_hours:
        return 1 / o.train_hours
    if o.decode_total_tokens_per_s:
        return o.decode_total_tokens_per_s
    if o.images_per_min:
        return o.images_per_min
    return gpu.dense_tflops * o.count


def gpu_layers_tokens_per_s(rec: object, layers: str) -> float | None:
    """One request's decode speed with `layers` of the job's layers on its card (llama.cpp
    -ngl) and the rest read from system RAM; None where the answer names no card."""
    from advisor.memory import estimate

    result = getattr(rec, "setup", None) or getattr(rec, "result", None)
    named = getattr(rec, "named", None) or getattr(rec, "headline", None)
    if not isinstance(result, EstimateResult) or named is None or not layers.isdigit():
        return None
    gpu = catalog.gpus().get(named.gpu_id)
    if gpu is None or not gpu.memory_bandwidth_gbs or result.model.kind != Kind.llm:
        return None
    trial = estimate(result.workload.model_copy(update={"n_gpu_layers": int(layers)}))
    if trial.estimate is None:
        return None
    return round(1 / decode_step_s(trial, gpu, 1), 1)
