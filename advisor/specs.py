"""What a catalog entry holds: the validated shape of a model (with its diffusion
pipeline's), a number format, a GPU, a rental price and one of the guide's task rows.
`catalog` reads the data files into them, so a typo in a data file fails at start-up."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from advisor.models.architecture import Architecture
from advisor.models.choices import Kind

# "config.json of ORG/NAME" / "model_index.json of ORG/NAME": the repo a catalog entry was read from
_REPO_IN_SOURCE = re.compile(r"\.json of ([A-Za-z0-9][\w.\-]*/[\w.\-]+)")


class DiffusionSpec(BaseModel):
    denoiser: str
    denoiser_params_b: float
    text_encoders_params_b: list[float]
    vae_params_b: float
    latent_channels: int
    default_resolution: int
    guidance: bool
    text_tokens: int
    attn_tokens_divisor: int
    attn_heads: int
    denoiser_act_bytes_per_token: int
    vae_force_upcast: bool
    vae_decode_tensors: int
    # A VAE re-scaled to decode in fp16 without overflow, for a VAE that overflows there
    # (SDXL's: madebyollin/sdxl-vae-fp16-fix): named where the pipeline runs in fp16
    vae_fp16_fix: str | None = None
    controlnet_params_b: float | None = None  # one ControlNet for this denoiser, if known
    # ControlNets the pipeline always runs beside the denoiser, whatever the question says
    # (InfiniteYou's InfuseNet is a FluxControlNetModel its pipeline passes as controlnet=):
    # the estimate counts at least this many, each controlnet_params_b.
    pipeline_controlnets: int = 0
    # Adapter layers the pipeline's own code keeps beside the denoiser unmerged (UNO's rank-512
    # LoRA processors): billions of parameters and the bytes each is stored in, whatever the
    # denoiser's format (its conversion touches the base checkpoint only).
    adapter_params_b: float = 0.0
    adapter_bytes_per_param: int = 2
    # Classifier-free guidance as one batch of 2 (cond + uncond concatenated); False: two
    # calls one after the other (WanPipeline, Wan's generate.py).
    cfg_batched: bool = True
    # The format the pipeline's own code loads its text encoders in, where it is not the
    # denoiser's (a from_pretrained without torch_dtype loads fp32: Cosmos-Predict1's T5).
    text_encoder_format: str | None = None
    # The pipeline's own code encodes the prompt on the GPU only (no CPU path): keeping the
    # encoder "off the GPU" means moving it off after encoding, so it is on the card beside
    # whatever stays resident while it encodes (Cosmos-Predict1 --offload_text_encoder_model).
    text_encoder_gpu_only: bool = False
    # An LLM the pipeline's own script runs on the prompt before encoding it (Cosmos-Predict1's
    # prompt upsampler), billions of 16-bit parameters: on the GPU for its phase, beside
    # whatever stays resident, and moved off after (--offload_prompt_upsampler). 0: none.
    prompt_upsampler_params_b: float = 0.0
    # The authors' own inference script the entry is sized for, where it is not a diffusers
    # pipeline (Cosmos-Predict1's text2world.py): said in place of "runtime: diffusers".
    own_script: str | None = None
    # The authors' script serves the text encoders and the VAE from another process on
    # another GPU and keeps only the denoiser on the card it runs on (Step-Video-T2V's
    # run_parallel.py with api/call_remote_server.py): their weights and the decode are not
    # on that card. The value names the server script (said in the answer).
    served_elsewhere: str | None = None
    # The denoiser's real shape, from its config: transformer blocks and the attention's
    # inner width (heads x head_dim). Without them training sizes it from the parameter
    # count (12 x hidden^2 per block), which misses DiTs whose head_dim is not 128 or whose
    # blocks carry cross-attention.
    blocks: int | None = None
    inner_dim: int | None = None
    # LoRA target name -> [linears of that name in the denoiser, in_features + out_features]
    # (a rank-r adapter on a linear holds r x (in + out) parameters), counted from the
    # model's config; training reads it for the trainer's target_modules.
    lora_linears: dict[str, list[int]] = Field(default_factory=dict)
    # Units kohya sd-scripts' --blocks_to_swap counts the denoiser's blocks in, where they
    # differ from `blocks` (FLUX: a double block counts as two single ones).
    swap_units: int | None = None
    # The most units the script lets --blocks_to_swap move, where its code or README says
    # (kohya's HunyuanVideo fork: 38 of 40); without it, all but one.
    swap_max: int | None = None

    @property
    def most_swapped(self) -> int:
        """Blocks a block swap asked without a count moves: the most the script allows
        (0 where the denoiser's blocks are not known)."""
        units = self.swap_units or self.blocks or 0
        return self.swap_max or max(units - 1, 0)

    # kohya sd-scripts' --split_mode (FLUX): the denoiser as two parts that take turns on the
    # GPU, [upper, lower] billions of parameters (data/models.toml says which blocks).
    split_parts_b: list[float] | None = None
    # A denoiser made of equal experts that take turns by timestep (Wan2.2 A14B: a
    # high-noise and a low-noise 14B DiT): all loaded, one in use per step, so an offload
    # that moves the idle one to the CPU holds one (data/models/video.toml says which).
    denoiser_experts: int = 1
    # Bytes a latent token holds for the timestep modulation when the denoiser's own code
    # embeds the timestep per token (fp32 copies x hidden; data/models/video.toml says
    # where and why), 0: one embedding per sample, nothing per token. Under diffusers it is
    # counted only where its pipeline expands the timesteps too (timestep_per_token_diffusers).
    timestep_modulation_per_hidden: int = 0
    timestep_per_token_diffusers: bool = False
    # Control hints a side network computes before the denoiser's blocks and keeps until the
    # block each feeds, one [tokens, inner_dim] tensor in the compute dtype apiece (Wan VACE:
    # one per context block; data/models/video_wan.toml says where), 0: none.
    control_hints: int = 0
    # Bytes a condition-cache entry keeps on the GPU per sequence token and guidance pass when
    # the pipeline's own cache is kept there (Workload.condition_cache_on_gpu): where its
    # cache stores slices of each layer's full-sequence projections, the slices keep the
    # whole tensors alive (OmniGen v1's OmniGenCache; data/models/image_dit.toml says how
    # much). 0: no such cache.
    condition_cache_bytes_per_token: int = 0
    # A UNet's layout from its unet/config.json: block_out_channels (one per resolution
    # level), layers_per_block, transformer layers per attention module at each level (0:
    # no attention there) and in the mid block; training sizes its activations per level
    # (advisor/memory/unet_levels.py).
    unet_block_out_channels: list[int] | None = None
    unet_layers_per_block: int = 2
    unet_transformer_layers: list[int] | None = None
    unet_mid_transformer_layers: int = 1
    # A spatio-temporal UNet (diffusers UNetSpatioTemporalConditionModel: Stable Video
    # Diffusion): every frame runs as a sample of the batch, and each ResNet and transformer
    # block has a temporal twin of its width (SpatioTemporalResBlock, TransformerSpatioTemporal
    # Model) blended with it by an AlphaBlender (advisor/memory/unet_levels.py).
    unet_temporal_twins: bool = False


class VideoStateSpec(BaseModel):
    """What a streaming video segmenter keeps on the GPU for a clip (SAM 2's
    SAM2VideoPredictor inference state; data/models/sam2.toml says where each figure comes
    from): every frame's pixels, resized to image_size and stored in fp32, and per tracked
    frame and object its memory features (mem_dim channels at image_size / backbone_stride,
    bf16), its low-resolution mask logits (image_size / mask_downscale, fp32) and its
    object pointer (obj_ptr_dim, fp32)."""

    image_size: int
    mem_dim: int
    backbone_stride: int
    mask_downscale: int
    obj_ptr_dim: int

    @property
    def frame_bytes(self) -> int:
        return 3 * self.image_size**2 * 4

    @property
    def tracked_frame_bytes(self) -> int:
        side = self.image_size // self.backbone_stride
        mask = self.image_size // self.mask_downscale
        return self.mem_dim * side * side * 2 + mask * mask * 4 + self.obj_ptr_dim * 4


class ModelSpec(BaseModel):
    id: str
    name: str
    kind: Kind
    family: str
    aliases: list[str] = Field(default_factory=list)
    params_b: float
    active_params_b: float | None = None
    default_format: str | None = None
    source: str
    checked: bool = False
    # Which figures were read in the model's own repository files and which came from
    # elsewhere (data/models/tts.toml); None where the entry does not say.
    verified: str | None = None
    arch: Architecture | None = None
    diffusion: DiffusionSpec | None = None
    activation_bytes_per_sample: int | None = None
    video_state: VideoStateSpec | None = None
    reference_input: int | None = None
    # Classes of the head the activation figure was measured with (a segmentor's logits
    # and loss grow with them: data/classic_activations.toml [segmentation_classes]).
    activation_classes: int | None = None
    # The part of activation_bytes_per_sample that is attention scores over the whole image
    # (global, or spatially reduced as SegFormer's): tokens x keys, both proportional to the
    # pixel count, so it grows with the square of the input area where the rest grows with it.
    attention_bytes_per_sample: int | None = None
    # A patch-based image encoder's native input side and patch (config.json image_size,
    # patch_size): a training run at another size the user names is a run over that grid.
    image_size: int | None = None
    patch_size: int | None = None
    # The chat / instruct repo of the family (`meta-llama/Meta-Llama-3-8B-Instruct`): what a
    # chat endpoint serves. A base repo ships no chat template, so `vllm serve` of it fails
    # on /v1/chat/completions. Equal to the source repo where the release is itself the
    # chat model (Qwen3, DeepSeek-V3, phi-4).
    chat_repo: str | None = None
    # The vendor's own pre-quantized chat repos by weight format ("awq-4bit", "gptq-4bit",
    # "gptq-8bit"): what `vllm serve` loads for AWQ / GPTQ (the 16-bit repo with
    # --quantization awq fails: it has no quantized weights); source in quantized_repos_source
    quantized_repos: dict[str, str] = Field(default_factory=dict)
    quantized_repos_source: str | None = None

    @property
    def serve_repo(self) -> str | None:
        """What `vllm serve` loads for a chat service: the chat repo, else the source repo."""
        return self.chat_repo or self.hub_repo

    @property
    def hub_repo(self) -> str | None:
        """The Hugging Face repo the entry was read from ("config.json of Qwen/Qwen2.5-32B-
        Instruct (Hugging Face Hub)" in its source): what `vllm serve` and
        `from_pretrained` load. None where the source names no repo."""
        m = _REPO_IN_SOURCE.search(self.source)
        return m.group(1) if m else None

    @property
    def active_b(self) -> float:
        return self.active_params_b or self.params_b


class FormatSpec(BaseModel):
    id: str
    bits: float
    scope: str  # "all" or "linear"
    aliases: list[str]
    source: str


class GpuSpec(BaseModel):
    id: str
    name: str
    vendor: str
    segment: str
    architecture: str
    compute_capability: str | None = None
    launch_year: int | None = None
    vram_gb: float
    usable_vram_gib: float
    memory_type: str | None = None
    memory_bandwidth_gbs: float
    fp32_tflops: float | None = None
    fp16_bf16_tensor_dense_tflops: float | None = None
    bf16_supported: bool = True
    fp8_supported: bool = False
    fp8_tensor_dense_tflops: float | None = None
    nvlink: bool | str = False
    nvlink_bandwidth_gbs: float | None = None
    # a PCIe datacenter card: NVLink joins only this many cards through bridges (the rest
    # of a node talks over PCIe); None: every card of an SXM / HGX board is linked
    nvlink_bridge_cards: int | None = None
    pcie: str | None = None
    tdp_w: float | None = None
    china_variant_note: str | None = None
    spec_confidence: str = "medium"
    spec_notes: str | None = None
    spec_read_date: str
    aliases: list[str] = Field(default_factory=list)
    shaky_fields: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    # False for cards people own that no platform rents (gpus_owned.toml): judged when
    # named, never proposed as a card to rent.
    rentable: bool = True
    # A merged entry ("V100 16/32GB") whose rented cards may be either size: the id of the
    # smaller variant, whose memory a rented card of this entry is planned with (a rental
    # of the merged entry must never be sized as the larger card).
    rented_as: str | None = None

    @property
    def usable_vram_bytes(self) -> int:
        return int(self.usable_vram_gib * 2**30)

    @property
    def has_nvlink(self) -> bool:
        return self.nvlink is True

    @property
    def cc(self) -> float:
        try:
            return float(self.compute_capability or 0)
        except ValueError:
            return 0.0

    @property
    def dense_tflops(self) -> float:
        """16-bit tensor throughput; where unknown, fall back to fp32 vector rate."""
        return self.fp16_bf16_tensor_dense_tflops or self.fp32_tflops or 10.0


class PriceSpec(BaseModel):
    gpu_id: str
    platform: str
    currency: str = Field(pattern=r"^(CNY|USD)$")
    price_per_gpu_hour: float = Field(gt=0, le=1000)
    tier: str = "on-demand"
    region: str | None = None
    confidence: str | None = None
    note: str | None = None
    source: str
    source_date: str | None = None
    read_date: str | None = None


class TaskSpec(BaseModel):
    id: str
    kind: Kind
    modes: list[str]
    families: list[str] = Field(default_factory=list)
    exclude_families: list[str] = Field(default_factory=list)  # same kind, another job
    min_params_b: float = 0.0
    max_params_b: float
    name_zh: str
    name_en: str
    vram_gb: list[int]
    cards: str
    gpu_ids: list[str]
    note_zh: str
    note_en: str
