"""A diffusion pipeline's stages and where its peak falls: every component resident, or
under diffusers' offload modes (model offload: one component at a time; sequential / leaf
group offload: weights streamed), each stage = the weights it holds + its working set."""

from __future__ import annotations

from dataclasses import dataclass

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.quantizers import (
    embedding_kept_params,
    fp32_kept_params,
    kept_module_bytes_per_weight,
    loads_on_gpu,
    stays_on_gpu_under_model_offload,
)
from advisor.memory.terms import Breakdown, load_peak
from advisor.models.workload import Workload

# A ControlNet is a trainable copy of the denoiser's encoder and middle blocks (Zhang et al.
# 2023, arXiv:2302.05543): the two checkpoints in the catalog are 0.42 (SD 1.5) and 0.49
# (SDXL) of their UNet. Without a catalog figure: half the denoiser, the larger side.
CONTROLNET_SHARE = 0.5


@dataclass
class PipelineMemory:
    """A pipeline's components and its two working sets (denoiser pass, VAE decode), each
    with the formula and values its term will show."""

    spec: ModelSpec
    fmt: str
    te_fmt: str
    den_w: float
    te_w: list[float]
    vae_w: float
    vae_bytes: int
    cn_w: float
    den_act: float
    act_formula: str
    act_values: dict
    decode: float
    decode_formula: str
    decode_values: dict
    decode_key: str = "vae_decode"
    # Block swap (kohya / musubi-tuner --blocks_to_swap N): `swapped` of the denoiser's
    # `units` kept on the CPU; den_w is then the share left on the card.
    swapped: int = 0
    units: int = 0
    # unmerged adapter layers beside the denoiser (DiffusionSpec.adapter_params_b)
    adapter_w: float = 0.0
    # the prompt upsampler's 16-bit weights, on the GPU for its own phase (0: none)
    upsampler_w: float = 0.0

    def add_decode(self, acc: Breakdown) -> int:
        return acc.add(
            "vae_decode",
            self.decode,
            self.decode_formula,
            key=self.decode_key,
            **self.decode_values,
        )

    def add_activations(self, acc: Breakdown) -> int:
        return acc.add(
            "activations",
            self.den_act,
            self.act_formula,
            **{"key": "activations.denoiser", **self.act_values},
        )

    def add_working_set(self, acc: Breakdown) -> int:
        """The larger of the denoiser pass and the VAE decode: they never coexist."""
        if self.decode >= self.den_act:
            return self.add_decode(acc)
        return acc.add(
            "activations",
            self.den_act,
            self.act_formula,
            **{"key": "activations.denoiser", **self.act_values},
        )


def add_controlnets(w: Workload, p: PipelineMemory, acc: Breakdown) -> int:
    d = p.spec.diffusion
    assert d is not None
    params = d.controlnet_params_b or d.denoiser_params_b * CONTROLNET_SHARE
    # the denoiser's format for a ControlNet the pipeline builds (diffusion_components.py
    # controlnet_format), the 16-bit compute dtype for one a user adds
    cn_fmt = p.fmt if p.fmt in ("fp32", "fp16", "bf16") or d.pipeline_controlnets else "bf16"
    bits = catalog.find_format(cn_fmt).bits  # type: ignore[union-attr]
    return acc.add(
        "controlnet",
        p.cn_w,
        f"{w.controlnets} x ControlNet {params:g}B x {bits:g} bits",
        count=w.controlnets,
        params_b=round(params, 3),
        bits=f"{bits:g}",
    )


def add_adapters(p: PipelineMemory, acc: Breakdown) -> int:
    """Adapter layers the pipeline keeps unmerged beside the denoiser: on the GPU whenever
    the denoiser is, in the bytes they were stored in."""
    d = p.spec.diffusion
    assert d is not None
    if not p.adapter_w:
        return 0
    return acc.add(
        "adapters",
        p.adapter_w,
        f"unmerged LoRA layers {d.adapter_params_b:g}B x {d.adapter_bytes_per_param * 8} bits",
        key="adapters.unmerged",
        params_b=d.adapter_params_b,
        bits=d.adapter_bytes_per_param * 8,
    )


def add_upsampler(p: PipelineMemory, acc: Breakdown) -> int:
    """The prompt upsampler's phase: its 16-bit weights beside what stays resident."""
    d = p.spec.diffusion
    assert d is not None
    return acc.add(
        "prompt_upsampler",
        p.upsampler_w,
        f"prompt upsampler {d.prompt_upsampler_params_b:g}B x 16 bits, on the GPU for its phase",
        key="prompt_upsampler.phase",
        params_b=d.prompt_upsampler_params_b,
    )


def denoiser_formula(p: PipelineMemory) -> str:
    d = p.spec.diffusion
    assert d is not None
    bits = catalog.find_format(p.fmt).bits  # type: ignore[union-attr]
    return f"{d.denoiser} {d.denoiser_params_b:g}B x {bits:g} bits"


def model_offload_peak(w: Workload, p: PipelineMemory, acc: Breakdown) -> int:
    """diffusers enable_model_cpu_offload: one component on the GPU at a time, so the peak
    is the largest phase (text encoding, denoising, decoding); a bitsandbytes 8-bit
    component gets no hook and stays on the GPU through all of them."""
    den_stays = stays_on_gpu_under_model_offload(p.fmt)
    te_on = w.text_encoders_on_gpu and bool(p.te_w)
    te_stays = te_on and stays_on_gpu_under_model_offload(p.te_fmt)
    stay = (p.den_w if den_stays else 0.0) + (sum(p.te_w) if te_stays else 0.0)
    den_on = p.den_w if den_stays else p.den_w / experts_of(p)
    phases = {
        "denoise": den_on
        + p.cn_w
        + p.adapter_w
        + p.den_act
        + (stay - p.den_w if den_stays else stay),
        "decode": p.vae_w + p.decode + stay,
        "text": (sum(p.te_w) if te_stays else text_phase_bytes(w, p) if te_on else 0)
        + (p.den_w if den_stays else 0.0),
        "upsampler": p.upsampler_w + stay,
    }
    peak = max(phases, key=lambda k: phases[k])
    # The 8-bit components beside the phase's own weights (never counted twice).
    own = {"denoise": p.den_w if den_stays else 0.0, "text": sum(p.te_w) if te_stays else 0.0}
    allocated = acc.add(
        "resident_8bit",
        stay - own.get(peak, 0.0),
        "model CPU offload skips bitsandbytes 8-bit components: they stay on the GPU",
    )
    if peak == "decode":
        allocated += acc.add(
            "vae",
            p.vae_w,
            "model CPU offload: only the VAE is resident while decoding",
            key="vae.model_offload",
        )
        return allocated + p.add_decode(acc)
    if peak == "upsampler":
        return allocated + add_upsampler(p, acc)
    if peak == "denoise":
        allocated += add_offloaded_denoiser(p, acc, den_on)
        allocated += add_controlnets(w, p, acc)
        allocated += add_adapters(p, acc)
        return allocated + p.add_activations(acc)
    return allocated + acc.add(
        "text_encoders",
        phases["text"] - (p.den_w if den_stays else 0.0),
        "model CPU offload: the text encoders that coexist (the last one stays while the "
        "negative prompt is encoded)",
        key="text_encoders.model_offload",
    )


def swapped_blocks(w: Workload, spec: ModelSpec) -> tuple[int, int]:
    """Block swap's blocks on the CPU and the units it counts them in (kohya sd-scripts /
    musubi-tuner / kohya's HunyuanVideo fork --blocks_to_swap N, custom_offloading_utils
    ModelOffloader): the swapped blocks' weights stay on the CPU and are exchanged with a
    resident block's as the pass reaches them, so the card holds the other blocks and no
    extra buffer. At least one unit stays on the card (the scripts refuse more)."""
    d = spec.diffusion
    assert d is not None
    units = d.swap_units or d.blocks or 0
    if not w.blocks_to_swap or units < 2:
        return 0, units
    return min(w.blocks_to_swap, units - 1), units


def experts_of(p: PipelineMemory) -> int:
    d = p.spec.diffusion
    return d.denoiser_experts if d is not None and d.denoiser_experts > 1 else 1


def add_offloaded_denoiser(p: PipelineMemory, acc: Breakdown, den_on: float) -> int:
    """The denoiser while denoising under model offload. A denoiser of experts that take
    turns by timestep holds one: Wan2.2's generate.py (_prepare_model_for_timestep, under
    --offload_model True) moves the idle expert to the CPU before the other's steps, and
    diffusers' model offload hooks transformer and transformer_2 as two components."""
    experts = experts_of(p)
    if p.swapped:
        d = p.spec.diffusion
        assert d is not None
        return acc.add(
            "weights",
            p.den_w,
            f"block swap: {p.swapped} of {p.units} blocks on the CPU; " + denoiser_formula(p),
            key="weights.block_swap",
            params_b=d.denoiser_params_b,
            bits=catalog.find_format(p.fmt).bits,  # type: ignore[union-attr]
            swapped=p.swapped,
            units=p.units,
            on_gpu_pct=round(100 * (1 - p.swapped / p.units)),
        )
    if experts == 1 or den_on >= p.den_w:
        return acc.add(
            "weights",
            p.den_w,
            "model CPU offload: only the denoiser is resident while denoising; "
            + denoiser_formula(p),
            key="weights.model_offload",
        )
    d = p.spec.diffusion
    assert d is not None
    params = d.denoiser_params_b / experts
    return acc.add(
        "weights",
        den_on,
        f"model CPU offload: one of the denoiser's {experts} experts on the GPU at a time "
        f"(the idle one on the CPU); {params:g}B x "
        f"{catalog.find_format(p.fmt).bits:g} bits",  # type: ignore[union-attr]
        key="weights.model_offload_expert",
        experts=experts,
        params_b=round(params, 2),
    )


# accelerate's cpu_offload and diffusers' leaf-level group offloading move one leaf module
# (a Linear, a conv) to the GPU for its forward: the largest leaf of a DiT is a fraction of
# a percent of it; 1/50 covers a UNet's widest conv and a prefetched next group
# (diffusers hooks/group_offloading.py, use_stream=True keeps one group ahead). Read
# 2026-11-30.
SEQUENTIAL_RESIDENT_SHARE = 1 / 50
# Block-level group offloading of the denoiser (diffusers hooks/group_offloading.py
# _apply_group_offloading_block_level, read 2026-12-07 at 58eb52c): the ModuleList blocks
# go to the GPU num_blocks_per_group at a time; with a stream "Using streams is only
# supported for num_blocks_per_group=1" (it is set to 1) and the next group is prefetched
# while one runs, so two blocks are on the GPU.
STREAM_GROUPS_ON_GPU = 2


def streamed_denoiser_bytes(p: PipelineMemory, w: Workload | None) -> tuple[float, int]:
    """What a streamed denoiser holds on the GPU: a leaf (SEQUENTIAL_RESIDENT_SHARE), or
    under block-level group offloading its blocks on the card, each taken as an equal share
    of the denoiser's blocks (0 blocks: not block-level)."""
    d = p.spec.diffusion
    assert d is not None
    leaf = p.den_w * SEQUENTIAL_RESIDENT_SHARE
    if w is None or not w.group_offload_blocks or not d.blocks:
        return leaf, 0
    on = STREAM_GROUPS_ON_GPU if w.group_offload_stream else w.group_offload_blocks
    on = min(on, d.blocks)
    return max(leaf, p.den_w * on / d.blocks), on


def text_phase_bytes(w: Workload, p: PipelineMemory) -> float:
    """Text encoders under model offload. Each component's hook offloads only the one
    before it in model_cpu_offload_seq (accelerate CpuOffload.pre_forward), and with
    classifier-free guidance encode_prompt runs the encoders a second time for the negative
    prompt: the first encoder then comes back while the last one is still on the GPU, which
    stays there until its own second call (diffusers StableDiffusion3Pipeline.encode_prompt,
    read 2026-11-30). So the last encoder and the largest other one coexist."""
    if not p.te_w:
        return 0.0
    d = p.spec.diffusion
    assert d is not None
    cfg = w.guidance if w.guidance is not None else d.guidance
    if cfg and len(p.te_w) > 1:
        return p.te_w[-1] + max(p.te_w[:-1])
    return max(p.te_w)


def text_encoder_block_offload_bytes(w: Workload, p: PipelineMemory) -> float:
    """The largest text encoder whole, where it is group-offloaded at block level.

    diffusers hooks/group_offloading.py _apply_group_offloading_block_level splits only the
    ModuleList / Sequential children of the module it is given into groups of
    num_blocks_per_group; every other child goes into one "unmatched" group onloaded when
    the module's forward starts and offloaded when it ends. A transformers text encoder
    keeps its blocks one level down (T5EncoderModel / UMT5EncoderModel: children `shared`
    and `encoder`, the blocks in encoder.block; CLIPTextModel: text_model.encoder.layers),
    so block-level group offloading puts the whole encoder on the GPU while it encodes:
    for memory it is model offload of that component. Encoders run one after the other,
    each offloaded after its own forward. Read 2026-12-01 at diffusers main 58eb52c
    (group_offloading.py last changed 2026-06-29; the same grouping since v0.33, #12692 of
    2025-12-05 only added standalone layers to the unmatched group). Passing
    block_modules=["encoder"] recurses and splits the blocks: that call is not this flag."""
    if not w.text_encoder_block_offload or not w.text_encoders_on_gpu or not p.te_w:
        return 0.0
    return max(p.te_w)


def sequential_offload_peak(p: PipelineMemory, acc: Breakdown, w: Workload | None = None) -> int:
    """enable_sequential_cpu_offload / leaf-level group offloading: weights stream leaf by
    leaf, so each stage holds little more than its working set. The peak is the larger
    stage: denoising (a streamed leaf + the VAE, which the documented group-offloading
    examples leave on the GPU, + the denoiser pass) or decoding (the VAE + its decode);
    a text encoder group-offloaded at block level adds a third, the encoder whole beside
    the VAE (text_encoder_block_offload_bytes)."""
    leaf, blocks_on = streamed_denoiser_bytes(p, w)
    te_whole = text_encoder_block_offload_bytes(w, p) if w is not None else 0.0
    if te_whole > max(p.decode, leaf + p.den_act):
        allocated = acc.add(
            "vae",
            p.vae_w,
            "sequential / group offload: the VAE on the GPU while the text is encoded",
            key="vae.sequential_offload_text",
        )
        return allocated + acc.add(
            "text_encoders",
            te_whole,
            "block-level group offload: the whole text encoder on the GPU while it encodes",
            key="text_encoders.block_group_offload",
        )
    if p.vae_w + p.decode >= leaf + p.vae_w + p.den_act:
        allocated = acc.add(
            "vae",
            p.vae_w,
            "sequential / group offload: the VAE on the GPU while decoding (the peak stage)",
            key="vae.sequential_offload",
        )
        return allocated + p.add_decode(acc)
    d = p.spec.diffusion
    assert d is not None
    if blocks_on and d.blocks:
        allocated = acc.add(
            "weights",
            leaf + p.vae_w,
            f"block-level group offload: {blocks_on} of the denoiser's {d.blocks} blocks on "
            "the GPU at a time, plus the VAE",
            key="weights.group_offload_blocks",
            blocks_on=blocks_on,
            blocks=d.blocks,
        )
        return allocated + p.add_activations(acc)
    allocated = acc.add(
        "weights",
        leaf + p.vae_w,
        "sequential CPU offload: one submodule on the GPU at a time, plus the VAE",
        key="weights.sequential_offload",
    )
    return allocated + p.add_activations(acc)


def bitsandbytes_load_bytes(w: Workload, p: PipelineMemory) -> float:
    """What from_pretrained puts on the GPU before an offload mode takes over: every
    bitsandbytes component, whole (quantizers.toml [bitsandbytes_loads_on_gpu]). A text
    encoder left off the GPU (embeddings precomputed, encoder deleted) is not loaded."""
    load = p.den_w if loads_on_gpu(p.fmt) else 0.0
    if w.text_encoders_on_gpu and loads_on_gpu(p.te_fmt):
        load += sum(p.te_w)
    return load


def offload_load_peak(w: Workload, p: PipelineMemory, acc: Breakdown, allocated: int) -> int:
    """Under an offload mode the run's stages hold one component (or one leaf) at a time,
    but the bitsandbytes components were all on the GPU together when they were loaded:
    the peak is the larger of the two moments (terms.load_peak)."""
    return load_peak(
        acc,
        allocated,
        bitsandbytes_load_bytes(w, p),
        "bitsandbytes loads its components onto the GPU (from_pretrained sets the device "
        "map to the GPU): all of them at once, before the offload hooks move them off",
        key="weights.bnb_load_before_offload",
    )


def all_resident(w: Workload, p: PipelineMemory, acc: Breakdown, phase: str = "") -> int:
    """Every component on the GPU, plus the larger working set. A `phase` before denoising
    can be the peak instead, with no working set: "encode", the text encoders kept off the
    GPU otherwise are on it while they encode (a pipeline with no CPU path for them moves
    them off after); "upsampler", the prompt upsampler's (resident_peak says which)."""
    encode_phase = phase == "encode"
    d = p.spec.diffusion
    assert d is not None
    allocated = acc.add(
        "weights",
        p.den_w,
        denoiser_formula(p),
        key="weights.denoiser",
        params_b=d.denoiser_params_b,
        bits=catalog.find_format(p.fmt).bits,  # type: ignore[union-attr]
    )
    allocated += add_controlnets(w, p, acc)
    allocated += add_adapters(p, acc)
    te_total = sum(p.te_w) if w.text_encoders_on_gpu or encode_phase else 0
    if te_total:
        te_bits = catalog.find_format(p.te_fmt).bits  # type: ignore[union-attr]
        kept_bytes = kept_module_bytes_per_weight(p.te_fmt, w.quantize_after_load)
        kept = sum(fp32_kept_params(x) for x in d.text_encoders_params_b) if kept_bytes else 0.0
        # token embeddings a Linear-only quantizer leaves in 16-bit (quantizers.toml)
        emb = sum(embedding_kept_params(x, p.te_fmt) for x in d.text_encoders_params_b)
        allocated += acc.add(
            "text_encoders",
            te_total,
            f"{' + '.join(f'{x:g}B' for x in d.text_encoders_params_b)} x {te_bits:g} bits"
            + (f" ({kept:g}B kept in {'fp32' if kept_bytes == 4 else '16-bit'})" if kept else "")
            + (f" (token embeddings {emb:.3g}B in 16-bit)" if emb else ""),
            key="text_encoders.encode_then_offload"
            if encode_phase
            else "text_encoders.embeddings"
            if emb
            else None,
            params_b=round(sum(d.text_encoders_params_b), 3),
            format=p.te_fmt,
            embedding_params_b=round(emb, 3),
        )
    allocated += acc.add(
        "vae",
        p.vae_w,
        f"VAE {d.vae_params_b:g}B x {p.vae_bytes} B"
        + (" (fp32 upcast)" if p.vae_bytes == 4 else ""),
        params_b=d.vae_params_b,
        bytes_per_param=p.vae_bytes,
    )
    if phase == "upsampler":
        return allocated + add_upsampler(p, acc)
    return allocated + (0 if encode_phase else p.add_working_set(acc))


def resident_phase(w: Workload, p: PipelineMemory) -> str:
    """Which phase peaks with every component resident: "" (denoising or decoding), "encode"
    (a GPU-only text encoder the user keeps off the GPU otherwise) or "upsampler"."""
    d = p.spec.diffusion
    assert d is not None
    work = max(p.den_act, p.decode)
    te = sum(p.te_w) if d.text_encoder_gpu_only and not w.text_encoders_on_gpu else 0.0
    resident_te = sum(p.te_w) if w.text_encoders_on_gpu else 0.0
    phases = {"": work + resident_te, "encode": te, "upsampler": p.upsampler_w + resident_te}
    return max(phases, key=lambda k: phases[k])
