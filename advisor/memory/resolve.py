"""From a Workload to the model it names: catalog lookup, an assumed architecture for a
bare parameter count, the default weight format."""

from __future__ import annotations

import math
from functools import lru_cache

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.memory.stacks import full_weights_format
from advisor.memory.terms import Breakdown
from advisor.models.architecture import Architecture
from advisor.models.choices import Kind, Mode
from advisor.models.result import ResolvedModel
from advisor.models.workload import Workload


class UnknownModelError(ValueError):
    """The workload names a model the catalog does not hold and gives no size."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        super().__init__(f"model: unknown model {name!r}")


class UnknownFormatError(ValueError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"weights_format: unknown format {name!r}")


# (params_b, layers, hidden): interpolation anchors for a model known only by its size,
# from the Llama/Qwen families' config.json (Qwen2.5-0.5B ... Llama-3.1-405B).
_SIZE_ANCHORS = [
    (0.5, 24, 896),
    (1.5, 28, 1536),
    (3.0, 28, 3072),
    (7.0, 32, 4096),
    (13.0, 40, 5120),
    (34.0, 60, 7168),
    (70.0, 80, 8192),
    (180.0, 96, 12288),
    (405.0, 126, 16384),
    (1000.0, 160, 20480),
]


def assumed_architecture(params_b: float) -> Architecture:
    """A Llama-like architecture for a bare parameter count (GQA with 8 KV heads)."""
    anchors = _SIZE_ANCHORS
    if params_b <= anchors[0][0]:
        _, layers, hidden = anchors[0]
    elif params_b >= anchors[-1][0]:
        _, layers, hidden = anchors[-1]
    else:
        for (p0, l0, h0), (p1, l1, h1) in zip(anchors, anchors[1:], strict=False):
            if p0 <= params_b <= p1:
                t = (math.log(params_b) - math.log(p0)) / (math.log(p1) - math.log(p0))
                layers = round(l0 + t * (l1 - l0))
                hidden = int(round((h0 + t * (h1 - h0)) / 128) * 128)
                break
    heads = max(hidden // 128, 1)
    return Architecture(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=min(8, heads),
        head_dim=128,
        intermediate=int(hidden * 3.5),
        vocab=128256,
        max_context_tokens=131072,
    )


@lru_cache(maxsize=4096)
def _find_model(name: str) -> ModelSpec | None:
    """catalog.find_model, remembered per name: the catalog does not change at run time."""
    return catalog.find_model(name)


# Resolved models by what `_resolve_model` reads of a workload without its own architecture:
# every estimate of a recommendation resolves the same model (one shared, read-only object).
_RESOLVED: dict[tuple, tuple[ResolvedModel, ModelSpec | None]] = {}


def resolve_model(w: Workload) -> tuple[ResolvedModel, ModelSpec | None]:
    if w.arch is not None:
        return _resolve_model(w)
    key = (w.model, w.params_b, w.active_params_b, w.kind)
    try:
        return _RESOLVED[key]
    except KeyError:
        pass
    found = _resolve_model(w)  # raises for an unknown name: nothing kept
    if len(_RESOLVED) < 1024:  # bounded: names and sizes come from users' text
        _RESOLVED[key] = found
    return found


def _resolve_model(w: Workload) -> tuple[ResolvedModel, ModelSpec | None]:
    spec = _find_model(w.model) if w.model else None
    if w.model and spec is None and w.params_b is None and w.arch is None:
        raise UnknownModelError(w.model, catalog.close_model_names(w.model))
    if spec is not None:
        arch = w.arch or spec.arch
        return (
            ResolvedModel(
                id=spec.id,
                name=spec.name,
                kind=spec.kind,
                params_b=float(w.params_b or spec.params_b),
                active_params_b=float(w.active_params_b or spec.active_b),
                arch=arch,
                from_catalog=True,
                source=spec.source,
            ),
            spec,
        )
    kind = w.kind or Kind.llm
    if kind in (Kind.rendering, Kind.video, Kind.simulation):
        return ResolvedModel(
            id=None,
            name=kind.value,
            kind=kind,
            params_b=0.0,
            active_params_b=0.0,
            arch=None,
            from_catalog=False,
        ), None
    params_b = w.params_b or params_from_arch(w.arch)
    arch = w.arch or (assumed_architecture(params_b) if kind == Kind.llm else None)
    return (
        ResolvedModel(
            id=None,
            name=w.model or f"{params_b:g}B",
            kind=kind,
            params_b=float(params_b),
            active_params_b=float(w.active_params_b or params_b),
            arch=arch,
            from_catalog=False,
        ),
        None,
    )


def params_from_arch(arch: Architecture | None) -> float:
    if arch is None:
        raise ValueError("params_b: give a parameter count or an architecture")
    per_layer = 4 * arch.hidden**2 + 3 * arch.hidden * arch.intermediate_
    return (arch.layers * per_layer + 2 * arch.vocab * arch.hidden) / 1e9


def default_format(w: Workload, spec: ModelSpec | None, acc: Breakdown) -> str:
    if w.weights_format:
        if catalog.find_format(w.weights_format) is None:
            raise UnknownFormatError(w.weights_format)
        return catalog.find_format(w.weights_format).id  # type: ignore[union-attr]
    full = w.mode in (Mode.full, Mode.pretrain)
    if w.mode == Mode.qlora:
        fmt = "nf4"
    elif full and (kept := full_weights_format(w.framework)):
        fmt = kept
    elif spec is not None and spec.default_format:
        fmt = spec.default_format
    elif w.mode.is_training and w.mixed_precision:
        fmt = "fp32"
    else:
        fmt = "bf16"
    acc.assume("weights_format", fmt)
    return fmt
