"""Diffusion pipelines: denoiser, text encoders, VAE, offload modes. Training is in
diffusion_training.py, the components' working sets in diffusion_components.py."""

from __future__ import annotations

from advisor.catalog import ModelSpec
from advisor.memory import video
from advisor.memory.band import family_band
from advisor.memory.diffusion_components import (
    PLAIN_FORMATS,
    controlnet_weight_bytes,
    denoiser_activations,
    text_encoder_format,
    vae_decode,
)
from advisor.memory.diffusion_training import estimate_diffusion_training
from advisor.memory.pipeline_stages import (
    PipelineMemory,
    all_resident,
    model_offload_peak,
    offload_load_peak,
    resident_phase,
    sequential_offload_peak,
    swapped_blocks,
)
from advisor.memory.quantizers import component_weight_bytes
from advisor.memory.resolve import default_format
from advisor.memory.terms import GENERIC_SOURCE, Breakdown, finish, load_peak
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.choices import Kind, Offload, Runtime
from advisor.models.estimate import Estimate
from advisor.models.workload import Workload

__all__ = ["denoiser_activations", "estimate_diffusion", "generic_diffusion_spec", "named_encoders"]


def estimate_diffusion(w: Workload, spec: ModelSpec, acc: Breakdown) -> Estimate:
    """A diffusion pipeline: what it generates (`_output_shape`), the workload as the
    pipeline's own code and the UIs run it (`_as_the_pipeline_runs`), its components' weights
    and working sets (`_pipeline_memory`), and the peak of the offload mode
    (`_offload_peak`). Training is estimate_diffusion_training's."""
    d = spec.diffusion
    assert d is not None
    fmt = default_format(w, spec, acc)
    te_fmt = text_encoder_format(w, fmt, acc, None if w.mode.is_training else spec)
    width, height, frames, images = _output_shape(w, spec, acc)
    den_w = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, fmt)
    if w.mode.is_training:
        return estimate_diffusion_training(w, spec, acc, fmt, den_w, width, height)
    w, managed = _as_the_pipeline_runs(w, spec, acc)
    p = _pipeline_memory(w, spec, acc, fmt, te_fmt, den_w, (width, height, frames, images))
    allocated = _offload_peak(w, spec, acc, p, fmt, managed)
    est = finish(acc, allocated, w, False, family_band(Kind.diffusion, False))
    est.runtime = w.runtime or Runtime.diffusers
    return est


def _output_shape(w: Workload, spec: ModelSpec, acc: Breakdown) -> tuple[int, int, int, int]:
    """(width, height, frames, images) generated at once: as asked, else the model's
    default resolution, a video's frames (a sectioned video's section) and one image or
    video, each said as assumed."""
    d = spec.diffusion
    assert d is not None
    geo = video.geometry(spec.id)
    width = w.image_width or (geo.width if geo else d.default_resolution)
    height = w.image_height or (geo.height if geo else d.default_resolution)
    if w.image_width is None:
        acc.assume("resolution", f"{width}x{height}")
    frames = 1
    if geo is not None and geo.section:
        frames = geo.frames
        acc.assume("section_frames", frames)
    elif geo is not None:
        frames = w.video_frames or geo.frames
        if w.video_frames is None:
            acc.assume("video_frames", frames)
    images = (w.images_per_prompt or 1) * (w.batch_size or 1)
    if w.images_per_prompt is None and w.batch_size is None:
        # a training step's images are its batch; "1 image(s) per prompt" is a generation's,
        # and a video model's is one video (its frames are assumed above)
        unit = "videos" if geo is not None else "images"
        acc.assume("batch_size" if w.mode.is_training else unit, 1)
    return width, height, frames, images


def _as_the_pipeline_runs(w: Workload, spec: ModelSpec, acc: Breakdown) -> tuple[Workload, bool]:
    """The workload as the pipeline's code runs it (a ControlNet it always builds, an encoder
    with no CPU path), the program said, and whether a UI manages the memory itself (then
    its VAE decode is retried tiled). (workload, managed by a UI)."""
    d = spec.diffusion
    assert d is not None
    if d.pipeline_controlnets > w.controlnets:
        # a ControlNet the pipeline's own code always builds beside the denoiser
        w = w.model_copy(update={"controlnets": d.pipeline_controlnets})
    if d.text_encoder_gpu_only and w.cpu_offload != Offload.none:
        # no CPU path for the encoder: under an offload mode it still encodes on the GPU
        w = w.model_copy(update={"text_encoders_on_gpu": True})
    if w.runtime is None and d.own_script:
        acc.assume("own_script", d.own_script)
    elif w.runtime is None:
        acc.assume("runtime", Runtime.diffusers.value)  # ComfyUI / WebUI allocate alike
    # ComfyUI and the WebUIs (A1111, Forge) manage memory themselves: a component is loaded
    # when its phase runs and idle ones are unloaded when VRAM runs short, so the peak is
    # the largest phase, as with diffusers' enable_model_cpu_offload (ComfyUI
    # comfy/model_management.py load_models_gpu / free_memory); and a VAE decode that runs
    # out of memory is retried tiled (comfy/sd.py VAE.decode). Read 2026-11-30.
    managed = w.runtime in (Runtime.comfyui, Runtime.webui) and w.cpu_offload == Offload.none
    if managed and not w.vae_tiling:
        w = w.model_copy(update={"vae_tiling": True})
    return w, managed


def _pipeline_memory(
    w: Workload,
    spec: ModelSpec,
    acc: Breakdown,
    fmt: str,
    te_fmt: str,
    den_w: float,
    shape: tuple[int, int, int, int],
) -> PipelineMemory:
    """Each component's weights (denoiser, text encoders, VAE, ControlNets, adapters, a
    prompt upsampler) and the denoising and decoding working sets."""
    d = spec.diffusion
    assert d is not None
    width, height, frames, images = shape
    vae_bytes = 4 if (d.vae_force_upcast or fmt == "fp32") else 2
    den_act, act_formula, act_values = denoiser_activations(
        w, spec, fmt, images, frames, width, height
    )
    decode, decode_formula, decode_values = vae_decode(
        w, spec, vae_bytes, images, frames, width, height
    )
    geo = video.geometry(spec.id)
    if geo is not None and geo.chunk_setting and w.decode_chunk_frames is None and frames > 1:
        acc.assume("decode_chunk", frames)
    p = PipelineMemory(
        spec=spec,
        fmt=fmt,
        te_fmt=te_fmt,
        den_w=den_w,
        # T5's `wo` stays fp32 under fp16 loads and bitsandbytes, 16-bit under torchao and
        # quanto's from_pretrained quantizers (data/quantizers.toml).
        te_w=[
            component_weight_bytes(x, te_fmt, w.quantize_after_load)
            for x in d.text_encoders_params_b
        ],
        vae_w=2.4e6 * 2 if w.tiny_vae else d.vae_params_b * 1e9 * vae_bytes,
        vae_bytes=vae_bytes,
        cn_w=controlnet_weight_bytes(w, spec, fmt),
        adapter_w=d.adapter_params_b * 1e9 * d.adapter_bytes_per_param,
        den_act=den_act,
        act_formula=act_formula,
        act_values=act_values,
        decode=decode,
        decode_formula=decode_formula,
        decode_values=decode_values,
        decode_key=decode_key(w, video.geometry(spec.id) is not None),
    )
    if d.served_elsewhere:
        # the encoders and the VAE run in the authors' server process on another GPU: the
        # card holds the denoiser alone (prompt embeddings and latents cross over the API)
        p.te_w, p.vae_w, p.decode = [], 0.0, 0.0
        acc.assume("served_elsewhere", d.served_elsewhere)
    if d.prompt_upsampler_params_b and not w.prompt_upsampler_off:
        p.upsampler_w = d.prompt_upsampler_params_b * 1e9 * 2
        acc.assume("prompt_upsampler", f"{d.prompt_upsampler_params_b:g}B")
    return p


def _offload_peak(
    w: Workload, spec: ModelSpec, acc: Breakdown, p: PipelineMemory, fmt: str, managed: bool
) -> int:
    """The peak under the offload mode: swapped blocks (components in turn), sequential or
    model offload (with from_pretrained's load peak), or everything resident (with a
    load-then-quantize peak)."""
    d = spec.diffusion
    assert d is not None
    # diffusers' from_pretrained puts bitsandbytes components on the GPU before an offload
    # mode moves them off; ComfyUI and the WebUIs load through their own loaders.
    from_pretrained = w.runtime in (None, Runtime.diffusers)
    p.swapped, p.units = swapped_blocks(w, spec)
    if p.swapped and w.cpu_offload != Offload.sequential:
        # The generation scripts that swap blocks (kohya's HunyuanVideo fork
        # generate_video_optimized.py, musubi-tuner's *_generate_video.py) encode the
        # prompt, free the text encoders, load the DiT with its swapped blocks on the CPU,
        # free it and load the VAE to decode: components in turn, as under model offload.
        p.den_w *= 1 - p.swapped / p.units
        acc.assume("block_swap", f"{p.swapped}/{p.units}")
        return model_offload_peak(w, p, acc)
    if w.cpu_offload == Offload.sequential:
        allocated = sequential_offload_peak(p, acc, w)
        if from_pretrained:
            allocated = offload_load_peak(w, p, acc, allocated)
        return allocated
    if w.cpu_offload == Offload.model or managed:
        allocated = model_offload_peak(w, p, acc)
        if from_pretrained:
            allocated = offload_load_peak(w, p, acc, allocated)
        return allocated
    # an encoder that only encodes on the GPU and is moved off after: its phase beside
    # the resident components, where it outweighs the denoising or decoding working set
    allocated = all_resident(w, p, acc, resident_phase(w, p))
    if w.quantize_after_load and fmt not in PLAIN_FORMATS:
        sixteen = estimate_weight_bytes(d.denoiser_params_b * 1e9, None, "bf16") + p.vae_w
        if w.text_encoders_on_gpu:
            sixteen += sum(
                estimate_weight_bytes(x * 1e9, None, "bf16") for x in d.text_encoders_params_b
            )
        allocated = load_peak(acc, allocated, sixteen)
    return allocated


def generic_diffusion_spec(params_b: float) -> ModelSpec:
    """A diffusion model known only by its size: a FLUX-like DiT holding every parameter,
    16 latent channels, text embeddings computed elsewhere."""
    from advisor.specs import DiffusionSpec

    return ModelSpec(
        id="generic-dit",
        name=f"{params_b:g}B diffusion transformer",
        kind=Kind.diffusion,
        family="dit",
        params_b=params_b,
        source=GENERIC_SOURCE,
        diffusion=DiffusionSpec(
            denoiser="dit",
            denoiser_params_b=params_b,
            text_encoders_params_b=[],
            vae_params_b=0.084,
            latent_channels=16,
            default_resolution=1024,
            guidance=False,
            text_tokens=512,
            attn_tokens_divisor=4,
            attn_heads=max(int((params_b / 12) ** 0.5 * 24), 8),
            denoiser_act_bytes_per_token=148000,
            vae_force_upcast=False,
            vae_decode_tensors=9,
        ),
    )


def named_encoders(spec: ModelSpec, w: Workload) -> ModelSpec:
    """A pipeline built from its size, with the text encoders the question named in place
    of the ones it assumes (none for an image DiT, T5-XXL for a video DiT)."""
    if not w.text_encoders_params_b or spec.diffusion is None:
        return spec
    d = spec.diffusion.model_copy(update={"text_encoders_params_b": w.text_encoders_params_b})
    return spec.model_copy(update={"diffusion": d})


def decode_key(w: Workload, video_vae: bool) -> str:
    """The VAE decode term's label: an image VAE's, a 3D VAE's, or a video decoded frame by
    frame (its own label says so, zh and en)."""
    if not video_vae or w.tiny_vae:
        return "vae_decode"
    return "vae_decode.video_per_frame" if w.vae_per_frame else "vae_decode.video"
