"""A transformer's shape: the fields of its config.json that memory depends on. Bounds turn
absurd input into a validation error naming the field."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Architecture(BaseModel):
    """The fields of a transformer's config.json that memory depends on."""

    model_config = ConfigDict(extra="forbid")

    layers: int = Field(ge=1, le=1000)
    hidden: int = Field(ge=16, le=200_000)
    heads: int = Field(ge=1, le=1024)
    kv_heads: int | None = Field(default=None, ge=1, le=1024)
    head_dim: int | None = Field(default=None, ge=8, le=1024)
    intermediate: int | None = Field(default=None, ge=16, le=1_000_000)
    vocab: int = Field(default=32000, ge=2, le=2_000_000)
    max_context_tokens: int = Field(default=4096, ge=64, le=10_000_000)
    tied_embeddings: bool = False
    gated_mlp: bool = True  # SwiGLU/GeGLU (3 matrices) vs GELU MLP (2)
    # gate and up projections as one Linear whose output stays alive through the activation
    # (GLM/ChatGLM dense_h_to_4h, Phi-3 gate_up_proj): one more intermediate-wide buffer in
    # an eager forward (data/runtimes.toml [transformers] prefill_mlp_buffers_fused)
    fused_gate_up: bool = False
    # the model's own code (ChatGLM2/3, GLM-4 remote code) grows the prefill's cache as one
    # tensor, concatenated layer by layer (advisor/memory/runtimes/stacked_cache.py)
    stacked_prefill_cache: bool = False
    # GPT-2's attention registers its causal mask as a buffer (transformers modeling_gpt2.py
    # GPT2Attention: `register_buffer("bias", torch.tril(torch.ones((max_positions,
    # max_positions), dtype=torch.bool)))`): one bool max_context x max_context matrix per
    # layer on the GPU beside the weights (data/runtimes.toml [transformers]).
    causal_mask_buffer: bool = False
    experts: int | None = Field(default=None, ge=1, le=4096)
    experts_per_token: int | None = Field(default=None, ge=1, le=4096)
    moe_intermediate: int | None = Field(default=None, ge=16, le=1_000_000)
    shared_experts: int = Field(default=0, ge=0, le=64)
    sliding_window: int | None = Field(default=None, ge=16)
    sliding_layers_fraction: float = Field(default=0.0, ge=0.0, le=1.0)
    kv_lora_rank: int | None = Field(default=None, ge=1)  # DeepSeek MLA compressed KV
    qk_rope_head_dim: int | None = Field(default=None, ge=1)
    qk_nope_head_dim: int | None = Field(default=None, ge=1)  # MLA keys' non-rotary part
    # Hybrid models (Jamba, Nemotron-H, LFM2, Qwen3-Next, granite-4 H): how many layers are
    # attention with a KV cache (None: all), and the fixed state the others keep per
    # sequence (mamba conv + SSM state, linear-attention state, short-conv cache), elements
    attention_layers: int | None = Field(default=None, ge=0, le=1000)
    recurrent_state_elements: int = Field(default=0, ge=0)
    state_layers: int = Field(default=0, ge=0, le=1000)  # layers that keep such a state
    # Parameters inside params_b that are not nn.Linear besides the token embedding and
    # lm_head (Gemma 3n's per-layer embedding table, a convolutional vision tower): a
    # quantizer of Linear layers (bitsandbytes, GPTQ, AWQ, torchao) leaves them in the load
    # dtype, as it leaves the embedding.
    unquantized_params: int = Field(default=0, ge=0)
    # Linear parameters of a vision or audio encoder inside params_b: quantized by
    # transformers' bitsandbytes loader, kept 16-bit by Unsloth's skip list
    # (data/quantizers.toml [encoder_skip]).
    encoder_linear_params: int = Field(default=0, ge=0)

    @property
    def kv_heads_(self) -> int:
        return self.kv_heads or self.heads

    @property
    def kv_layers_(self) -> int:
        """Layers that keep a KV cache (attention); the rest keep a fixed-size state."""
        return self.layers if self.attention_layers is None else self.attention_layers

    @property
    def head_dim_(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def intermediate_(self) -> int:
        return self.intermediate or 4 * self.hidden
