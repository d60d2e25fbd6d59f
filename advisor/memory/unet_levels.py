"""A UNet's training activations, level by level (diffusers UNet2DConditionModel): each
resolution level runs its ResNet and transformer blocks at its own grid (the latent grid
/ 4 per level down) and width (block_out_channels), so the saved tensors are summed over
the levels rather than counted as equal blocks at the full latent grid.

Per latent token and channel, 16-bit (fp16 autocast), read in diffusers 2026-12-07:
- ResnetBlock2D.forward (models/resnets.py) saves the input, norm1's output (GroupNorm is
  on autocast's fp32 list: 4 B), conv1's fp16 input, conv1's output, norm2's fp32 output
  and conv2's fp16 input: 2 + 4 + 2 + 2 + 4 + 2 = 16 B a channel. An up block's ResNet
  takes the skip connection concatenated (CrossAttnUpBlock2D / UpBlock2D: torch.cat of
  hidden_states and res_hidden_states), so its first three tensors are twice as wide:
  8 B more a channel.
- A BasicTransformerBlock (models/attention.py) is sized with the engine's saved-tensor
  figure per transformer block, 40 B a channel (diffusion_training.py per_token_layer).
- Transformer2DModel around the blocks (models/transformers/transformer_2d.py) saves its
  GroupNorm's fp32 output and the fp16 inputs of proj_in and proj_out: 8 B a channel.
Under gradient checkpointing (enable_gradient_checkpointing sets it on the ResNet blocks
of every down / mid / up block and on Transformer2DModel's blocks) each checkpointed unit
keeps only its fp16 input, and one unit's tensors are rebuilt at a time in the backward
(a spatio-temporal ResNet is checkpointed with its twin; TransformerSpatioTemporalModel
checkpoints only the spatial block, so the temporal one keeps its tensors).

A spatio-temporal UNet (Stable Video Diffusion's UNetSpatioTemporalConditionModel, read in
diffusers models/resnet.py SpatioTemporalResBlock, models/transformers/
transformer_temporal.py TransformerSpatioTemporalModel, 2026-12-08) runs every frame as a
sample, and follows each ResnetBlock2D with a TemporalResnetBlock of the same width (the
same norm / conv / norm / conv sequence over the frame axis) and each BasicTransformerBlock
with a TemporalBasicTransformerBlock; an AlphaBlender then mixes the two outputs
(`alpha * x_spatial + (1 - alpha) * x_temporal`), saving both fp16 inputs: each twin is
sized as its spatial block, plus 4 B a channel for the blend.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.specs import DiffusionSpec

RESNET_BYTES = 16
UP_RESNET_EXTRA_BYTES = 8
BLOCK_BYTES = 40
WRAPPER_BYTES = 8
CHECKPOINT_INPUT_BYTES = 2
BLEND_BYTES = 4  # AlphaBlender: x_spatial and x_temporal, fp16, saved for the backward


@dataclass
class Level:
    tokens: float
    channels: int
    resnets: int
    up_resnets: int
    blocks: int  # BasicTransformerBlocks
    wrappers: int  # Transformer2DModels around them
    temporal: bool = False  # each ResNet and block followed by its temporal twin and a blend


def unet_levels(d: DiffusionSpec, latent_tokens: float) -> list[Level] | None:
    """The levels of a UNet the catalog gives the config of, at a latent grid of
    `latent_tokens` (height / 8 x width / 8); None without the config."""
    chans = d.unet_block_out_channels
    if not chans:
        return None
    per = d.unet_layers_per_block
    depths = d.unet_transformer_layers or [1] * len(chans)
    levels = []
    for i, c in enumerate(chans):
        t = depths[i]
        attn_modules = (2 * per + 1) if t else 0  # down: per, up: per + 1
        levels.append(
            Level(
                latent_tokens / 4**i,
                c,
                per,
                per + 1,
                t * attn_modules,
                attn_modules,
                d.unet_temporal_twins,
            )
        )
    mid = levels[-1]
    mid_t = d.unet_mid_transformer_layers
    # UNetMidBlock2DCrossAttn: two ResNets around one Transformer2DModel
    levels.append(
        Level(mid.tokens, mid.channels, 2, 0, mid_t, 1 if mid_t else 0, d.unet_temporal_twins)
    )
    return levels


def saved_bytes(lv: Level) -> float:
    per_channel = (
        lv.resnets * RESNET_BYTES
        + lv.up_resnets * (RESNET_BYTES + UP_RESNET_EXTRA_BYTES)
        + lv.blocks * BLOCK_BYTES
        + lv.wrappers * WRAPPER_BYTES
    )
    if lv.temporal:  # the twins at the output width, and one blend each
        twins = lv.resnets + lv.up_resnets + lv.blocks
        per_channel += (
            (lv.resnets + lv.up_resnets) * RESNET_BYTES
            + lv.blocks * BLOCK_BYTES
            + twins * BLEND_BYTES
        )
    return lv.tokens * lv.channels * per_channel


def checkpointed_bytes(levels: list[Level]) -> float:
    """Each checkpointed unit's fp16 input (an up ResNet's is the concatenation, twice as
    wide), the wrappers' own tensors, and the largest unit rebuilt in the backward."""
    kept = 0.0
    largest = 0.0
    for lv in levels:
        units = lv.resnets + 2 * lv.up_resnets + lv.blocks
        # a spatio-temporal ResNet is checkpointed whole, twin and blend inside; the
        # temporal transformer block runs outside the checkpoint and keeps its tensors
        unkept = lv.blocks * (BLOCK_BYTES + BLEND_BYTES) if lv.temporal else 0
        kept += (
            lv.tokens
            * lv.channels
            * (units * CHECKPOINT_INPUT_BYTES + lv.wrappers * WRAPPER_BYTES + unkept)
        )
        resnet = RESNET_BYTES + UP_RESNET_EXTRA_BYTES if lv.up_resnets else RESNET_BYTES
        if lv.temporal:
            resnet += RESNET_BYTES + BLEND_BYTES
        one = max(resnet, BLOCK_BYTES if lv.blocks else 0)
        largest = max(largest, lv.tokens * lv.channels * one)
    return kept + largest


def unet_training_activations(
    d: DiffusionSpec, latent_tokens: float, checkpointed: bool
) -> tuple[float, int] | None:
    """Saved activations of one training sample, and the number of levels; None where the
    catalog lacks the UNet's config."""
    levels = unet_levels(d, latent_tokens)
    if levels is None:
        return None
    if checkpointed:
        return checkpointed_bytes(levels), len(levels) - 1
    return sum(saved_bytes(lv) for lv in levels), len(levels) - 1
