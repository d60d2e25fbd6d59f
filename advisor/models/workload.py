"""What the user wants to run, as the engine reads it. Units live in field names (`*_b` for
billions, `*_tokens`); every bound turns absurd input (10^30 parameters, a batch of a
billion) into a validation error naming the field instead of a nonsense answer."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from advisor.models.architecture import Architecture
from advisor.models.choices import (
    Attention,
    Kind,
    Mode,
    Offload,
    Optimizer,
    Parallelism,
    Runtime,
)


class Workload(BaseModel):
    """What the user wants to run. Everything is optional except what identifies the model
    (a catalog name, a parameter count, an architecture or a task with no model)."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    kind: Kind | None = None
    model: str | None = Field(default=None, max_length=200)
    params_b: float | None = Field(default=None, gt=0, le=20_000)
    active_params_b: float | None = Field(default=None, gt=0, le=20_000)
    arch: Architecture | None = None

    mode: Mode = Mode.inference
    weights_format: str | None = Field(default=None, max_length=40)
    text_encoder_format: str | None = Field(default=None, max_length=40)
    compute_dtype: str | None = Field(default=None, pattern=r"^(fp32|fp16|bf16)$")
    # transformers' torch_dtype when the weights are quantized: the dtype of what the quantizer
    # leaves alone (embeddings, lm_head, norms) and of the hidden states. None: the loader's
    # default (float16 under bitsandbytes, data/quantizers.toml [load_dtype]).
    load_dtype: str | None = Field(default=None, pattern=r"^(fp32|fp16|bf16)$")
    mixed_precision: bool | None = None

    batch_size: int | None = Field(default=None, ge=1, le=65_536)
    prompt_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    new_tokens: int | None = Field(default=None, ge=0, le=10_000_000)
    context_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    # "平均上下文8k", "8k average context": context_tokens is the average request, not the
    # longest (serving sizes the KV pool by it and --max-model-len above it)
    context_average: bool = False
    seq_len: int | None = Field(default=None, ge=1, le=10_000_000)

    # down to 16: classic datasets are small (MNIST 28 px, CIFAR 32 px)
    image_width: int | None = Field(default=None, ge=16, le=16_384)
    image_height: int | None = Field(default=None, ge=16, le=16_384)
    # Classes a dense-prediction head predicts (ADE20K 150, Cityscapes 19): a segmentor's
    # full-resolution logits and loss scale with them. None: the catalog entry's own.
    num_classes: int | None = Field(default=None, ge=1, le=100_000)
    images_per_prompt: int | None = Field(default=None, ge=1, le=256)
    denoise_steps: int | None = Field(default=None, ge=1, le=1000)
    guidance: bool | None = None
    vae_slicing: bool = False
    text_encoders_on_gpu: bool = True
    # A pipeline's prompt upsampler turned off (Cosmos-Predict1 --disable_prompt_upsampler).
    prompt_upsampler_off: bool = False
    # A pipeline's own key/value cache of its condition tokens kept on the GPU between layers
    # (OmniGen v1's offload_kv_cache=False; its default moves it to the CPU):
    # DiffusionSpec.condition_cache_bytes_per_token.
    condition_cache_on_gpu: bool = False
    # A trainer told to cache the VAE latents before the steps (kohya / diffusers scripts
    # --cache_latents): no per-step VAE encode (advisor/memory/diffusion_training.py step_peak).
    latents_cached: bool = False
    # The prompts' text embeddings computed in a run of their own before training (diffusers
    # examples/research_projects/flux_lora_quantization compute_embeddings.py, then a trainer
    # that loads no text encoder): the encoders never share the card with the VAE's encode
    # (advisor/memory/diffusion_training.py precompute_peak, as for kohya's caching).
    conditions_precomputed_apart: bool = False
    # diffusers apply_group_offloading(text_encoder, offload_type="block_level"): on a
    # transformers encoder it onloads the whole encoder while it encodes (see
    # advisor/memory/pipeline_stages.py text_encoder_block_offload_stage).
    text_encoder_block_offload: bool = False
    # diffusers block-level group offloading of the denoiser (enable_group_offload /
    # apply_group_offloading(transformer, offload_type="block_level", num_blocks_per_group=N,
    # use_stream=...)): N of its blocks on the GPU at a time; with use_stream one block and
    # the next prefetched (advisor/memory/pipeline_stages.py streamed_denoiser_bytes).
    group_offload_blocks: int | None = Field(default=None, ge=1, le=200)
    # Text encoders a question names for a pipeline the catalog lacks ("a 2B DiT with a
    # Gemma-2-2B text encoder"), billions of parameters each: counted beside the generic
    # pipeline's denoiser (advisor/parse/named_encoders.py); a catalog pipeline keeps its own.
    text_encoders_params_b: list[float] | None = None
    group_offload_stream: bool = False
    tiny_vae: bool = False
    controlnets: int = Field(default=0, ge=0, le=8)  # ControlNets beside the denoiser

    optimizer: Optimizer | None = None
    gradient_checkpointing: bool | None = None
    attention: Attention | None = None
    lora_rank: int | None = Field(default=None, ge=1, le=4096)
    lora_targets: str | None = Field(default=None, max_length=300)
    gradient_accumulation: int | None = Field(default=None, ge=1, le=100_000)
    # A chunked cross-entropy (torchtune's CEWithChunkedOutputLoss, or a chunked / fused loss
    # named): True asked, False a standard loss asked ("standard CE"), None the stack's own
    # default (data/training_stacks.toml [loss]: torchtune's recipes chunk theirs).
    chunked_loss: bool | None = None
    # torch.compile on the model and loss (torchtune's `compile: True`): changes what a
    # compiled chunked loss saves for backward (advisor/memory/stacks.py stack_loss_bytes).
    torch_compile: bool = False
    # A language model trained through a small task head instead of its LM head
    # (AutoModelForSequenceClassification's `score` Linear, or the base AutoModel with a head
    # of its own): the loss never sees vocabulary-sized logits (data/training_stacks.toml
    # [classifier_head]).
    classifier_head: bool = False
    activation_offload: bool = False
    optimizer_in_backward: bool = False
    # Liger kernels (HF use_liger_kernel, LLaMA-Factory enable_liger_kernel, ms-swift
    # --use_liger_kernel): fused linear cross-entropy, RMSNorm and SwiGLU.
    liger_kernel: bool = False
    # Tokens per sequence whose logits the loss reads, when not all of them: TRL's GRPO and
    # RLOO pass logits_to_keep = the completion + 1 and take log-probs of 16-bit logits one
    # row at a time (trl/trainer/utils.py selective_log_softmax). None: every token.
    loss_tokens: int | None = Field(default=None, ge=1, le=10_000_000)

    num_gpus: int = Field(default=1, ge=1, le=4096)
    parallelism: Parallelism | None = None
    cpu_offload: Offload = Offload.none
    # the KV cache types of advisor/data/formats.toml [kv.*]; which runtime allows which is
    # advisor/data/kv_cache.toml
    kv_cache_dtype: str | None = Field(
        default=None,
        pattern=r"^(fp32|fp16|bf16|fp8|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl|int8|int4|int2)$",
    )
    framework: str | None = Field(default=None, max_length=40)
    runtime: Runtime | None = None  # None: the engine picks the usual one and says so
    concurrency: int | None = Field(default=None, ge=1, le=65_536)  # concurrent requests served
    # Serving N users: the count as asked ("30 个学生", "10000 users") when it is
    # people, of whom a share generates at once (`concurrency`, advisor/serving.py), or a
    # request rate ("QPS 10") turned into concurrent streams by Little's law.
    users: int | None = Field(default=None, ge=1, le=10**9)
    users_are_people: bool = False
    qps: float | None = Field(default=None, gt=0, le=10**9)

    train_tokens: int | None = Field(default=None, ge=1, le=10**15)
    # A vision training run's images: the dataset's training split x epochs (how long it
    # takes: advisor/throughput.py).
    train_images: int | None = Field(default=None, ge=1, le=10**13)

    # Preference / RL post-training (mode grpo, dpo, ppo, kto, orpo, simpo, rloo). None:
    # the method's or the framework's default, stated in `assumed` (data/post_training.toml).
    policy_mode: Mode | None = None  # how the policy trains: full, lora, qlora (None: LoRA)
    num_generations: int | None = Field(default=None, ge=1, le=1024)  # G per prompt
    reference_model: bool | None = None  # False: none kept (beta 0, precomputed log-probs)
    # where completions are generated: "generate" (the trainer's own model.generate),
    # "colocate" (vLLM inside the trainer's process), "server" (vLLM on other cards)
    rollout: str | None = Field(default=None, pattern=r"^(generate|colocate|server)$")

    # Runtime and recipe knobs. None: the runtime's own default, stated in
    # `assumed`.
    video_frames: int | None = Field(default=None, ge=1, le=10_000)
    # kohya sd-scripts / musubi-tuner --blocks_to_swap N: N of the denoiser's blocks kept on
    # the CPU and swapped in as the step reaches them (advisor/memory/diffusion.py).
    blocks_to_swap: int | None = Field(default=None, ge=0, le=1000)
    # kohya sd-scripts --split_mode: the FLUX DiT's two halves take turns on the GPU.
    split_mode: bool = False
    vae_tiling: bool = False
    # The pipeline decodes the video's latents one frame at a time (lvdm's perframe_ae=True:
    # DynamiCrafter, ToonCrafter, ViewCrafter); data/models/video.toml [per_frame_decode].
    vae_per_frame: bool = False
    # Frames a video pipeline puts through its VAE decoder per call (diffusers
    # StableVideoDiffusionPipeline decode_chunk_size, Stability's sgm decoding_t); None: the
    # pipeline's default (data/models/video.toml decode_frames; 0 there: all frames at once).
    decode_chunk_frames: int | None = Field(default=None, ge=1, le=10_000)
    selective_checkpointing: bool = False  # torchtitan/Megatron SAC: some activations kept
    trainable_embeddings: bool = False  # PEFT modules_to_save: embeddings + lm_head train
    tensor_parallel: int | None = Field(default=None, ge=1, le=1024)  # TP inside FSDP/ZeRO
    pipeline_parallel: int | None = Field(default=None, ge=1, le=1024)
    max_num_batched_tokens: int | None = Field(default=None, ge=1, le=10_000_000)  # vLLM
    max_num_seqs: int | None = Field(default=None, ge=1, le=100_000)  # vLLM --max-num-seqs
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)  # vLLM/SGLang
    # LMDeploy --cache-max-entry-count as a share: the part of the memory left free after the
    # weights that its KV block pool takes at start (data/runtimes.toml [lmdeploy]). None: 0.8.
    cache_max_entry_count: float | None = Field(default=None, gt=0, lt=1)
    n_gpu_layers: int | None = Field(default=None, ge=0, le=1000)  # llama.cpp -ngl
    n_ubatch: int | None = Field(default=None, ge=1, le=65_536)  # llama.cpp micro-batch
    n_cpu_moe: int | None = Field(default=None, ge=0, le=1000)  # llama.cpp --n-cpu-moe
    # transformers < 4.36 kept the KV cache as tuples that generate() re-concatenated every
    # step, and before 4.45 computed logits for every prompt token.
    legacy_generate: bool = False
    # transformers generate(cache_implementation="static") or a StaticCache passed to it
    # (torch.compile recipes): the whole cache, for the context (max_cache_len), exists before
    # the prefill runs, so the prefill's buffers come on top of all of it.
    static_cache: bool = False
    # The prompt run as a plain forward, model(input_ids) called directly and decoded by a
    # loop of such calls, not generate(): a CausalLM forward computes logits for every
    # position (logits_to_keep=0 by default) at any release, and the caller's outputs live
    # until its next call returns (data/runtimes.toml [transformers] plain_forward_source).
    plain_forward: bool = False
    # past_key_values handed to the model as tuples (to_legacy_cache / from_legacy_cache each
    # step): the forward builds a new cache whose concatenated tensors coexist with the
    # caller's tuple, as before 4.36 (data/runtimes.toml [transformers] tuple_cache_source).
    tuple_cache: bool = False
    # mmdet's multi-scale crop recipe ("ms-crop": Swin / DETR-style AutoAugment with a random
    # crop): a batch pads to a canvas long side x long side's crop-flipped length
    # (data/classic_activations.toml [multiscale_crop]).
    multiscale_crop: bool = False
    # The most objects (labelled boxes) one training image holds, when said ("max 50 objects
    # per image", "每张图最多200个框"): a detector's label assigner pads the batch's targets to
    # it (data/classic_activations.toml [label_assigner]). None: a COCO-style mosaic.
    objects_per_image: int | None = Field(default=None, ge=1, le=100_000)
    # The transformers release generate() runs under ("4.40"), when known: which of its
    # generations applies (data/runtimes.toml [transformers] *_since). None: today's.
    transformers_version: str | None = Field(default=None, pattern=r"^\d+\.\d+(\.\d+)?$")
    # The Unsloth release (year.month, "2024.1"), when known: whether its checkpoints are
    # offloaded and its loss fused (data/training_stacks.toml [unsloth_release]). None: today's.
    unsloth_version: str | None = Field(default=None, pattern=r"^20\d\d\.\d{1,2}(\.\d+)?$")
    cuda_graphs: bool | None = None  # vLLM/SGLang: None = on (their default)
    # vLLM's custom all-reduce (IPC buffers) under TP: None = on (the default; vLLM turns it
    # off itself on cards without P2P), False = --disable-custom-all-reduce.
    custom_all_reduce: bool | None = None
    # vLLM builds whose sampler filters top-k/top-p by sorting the whole vocabulary in
    # PyTorch (V0, and V1 before the Triton top-k/top-p kernel of Feb 2026): the start-up
    # profile's sampler warm-up then holds the sort's buffers for max_num_seqs x vocab.
    vllm_sort_sampler: bool = False
    # Scripts that load 16-bit weights onto the GPU and quantize them there (torchao's
    # quantize_, quanto's quantize/freeze on a model already moved): the load is a peak too.
    quantize_after_load: bool = False

    @property
    def tuning(self) -> Mode:
        """How the weights train: the mode itself, or under a post-training method the
        policy's own recipe (LoRA unless told)."""
        if self.mode.is_post_training:
            return self.policy_mode or Mode.lora
        return self.mode

    @model_validator(mode="after")
    def _names_the_work(self) -> Workload:
        no_model = self.model is None and self.params_b is None and self.arch is None
        if no_model and self.kind in (None, Kind.llm, Kind.diffusion, Kind.classic):
            raise ValueError("model: name a model, a parameter count (params_b) or an arch")
        if self.active_params_b and self.params_b and self.active_params_b > self.params_b:
            raise ValueError("active_params_b: cannot exceed params_b")
        if self.policy_mode is not None and (
            self.policy_mode.is_post_training or not self.policy_mode.is_training
        ):
            raise ValueError("policy_mode: full, lora, qlora or another way to train weights")
        return self
