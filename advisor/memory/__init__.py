"""Peak GPU memory per card, as a breakdown of named terms.

Each term is one small function with its formula and source in the docstring (the
EleutherAI "Transformer Math 101" way), so the reply can show the same terms. Two views:

* allocated — tensors only, what `torch.cuda.max_memory_allocated()` reports;
* total — what nvidia-smi shows: allocated + CUDA context + caching-allocator slack.

Where the physics is uncertain we err high: an under-estimate sends a user into OOM after
they paid; an over-estimate costs them a slightly bigger card.

One module per family or runtime: `transformer` (the physics of a decoder), `llm`
(inference and training dispatch), `runtimes/` (how transformers, vLLM/SGLang, llama.cpp,
ExLlamaV2 and AutoAWQ's fused layers allocate), `training` (recipes), `sharding` +
`distributed` (what DeepSpeed ZeRO, torchtitan's FSDP2/SAC/TP/PP and Liger keep or save,
from their code), `diffusion` and `video` (pipelines),
`multimodal` (image and audio tokens), `classic` (CNNs, segmentation); `terms` holds the
breakdown, overheads and the band; `resolve` the model lookup.
"""

from __future__ import annotations

from advisor.memory.band import settle_band
from advisor.memory.classic import estimate_classic_cnn
from advisor.memory.diffusion import estimate_diffusion, generic_diffusion_spec, named_encoders
from advisor.memory.llm import estimate_transformer
from advisor.memory.resolve import (
    UnknownFormatError,
    UnknownModelError,
    assumed_architecture,
    resolve_model,
)
from advisor.memory.rl import estimate_post_training
from advisor.memory.strata import band_stratum
from advisor.memory.terms import CUDA_CONTEXT_BYTES, GIB, Breakdown
from advisor.memory.training_recipe import optimizer_state_bytes_per_param
from advisor.memory.transformer import (
    activation_bytes_per_token_layer,
    embedding_params,
    estimate_weight_bytes,
    kv_bytes_per_token,
    mlp_width,
    trainable_params,
)
from advisor.memory.video_generic import generic_video_spec
from advisor.models.choices import Kind
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload

__all__ = [
    "CUDA_CONTEXT_BYTES",
    "GIB",
    "UnknownFormatError",
    "UnknownModelError",
    "activation_bytes_per_token_layer",
    "assumed_architecture",
    "embedding_params",
    "estimate",
    "estimate_weight_bytes",
    "kv_bytes_per_token",
    "mlp_width",
    "optimizer_state_bytes_per_param",
    "resolve_model",
    "trainable_params",
]


def estimate(w: Workload, lean: bool = False) -> EstimateResult:
    """Estimate peak memory per GPU for a workload. `lean`: the same numbers, its terms
    without their text (terms.Breakdown), for a caller that reads only the totals."""
    model, spec = resolve_model(w)
    acc = Breakdown(lean)
    if model.kind in (Kind.rendering, Kind.video, Kind.simulation):
        return EstimateResult(workload=w, model=model, estimate=None, assumed=[])
    if model.kind == Kind.diffusion:
        if (spec is None or spec.diffusion is None) and (w.video_frames or 1) > 1:
            # frames asked of a model the catalog lacks: the video DiTs' shared pipeline
            spec = named_encoders(generic_video_spec(model.params_b), w)
            acc.assume("pipeline", "generic_video_dit")
        elif spec is None or spec.diffusion is None:
            spec = named_encoders(generic_diffusion_spec(model.params_b), w)
            acc.assume("pipeline", "generic_dit")  # all parameters in the denoiser
        est = estimate_diffusion(w, spec, acc)
    elif model.kind == Kind.classic and (spec is None or spec.arch is None) and w.arch is None:
        est = estimate_classic_cnn(w, model, spec, acc)
    elif w.mode.is_post_training and model.kind == Kind.llm:
        est = estimate_post_training(w, model, spec, acc)
    else:
        est = estimate_transformer(w, model, spec, acc)
    if est is not None:
        fmt = w.weights_format or next(
            (a.value for a in acc.assumed if a.field == "weights_format"), None
        )
        settle_band(est, model.kind, w, spec, model, fmt, band_stratum(model.kind, w, fmt))
    return EstimateResult(workload=w, model=model, estimate=est, assumed=acc.assumed)
