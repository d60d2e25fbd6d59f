"""What the model itself brings: a mixture of experts' total parameters, a context past its
window, a sub-4-bit format's quality, a pipeline's own memory levers from its authors'
guide."""

from __future__ import annotations

from advisor.catalog import GpuSpec, find_format, find_model
from advisor.models.choices import Kind
from advisor.models.result import EstimateResult
from advisor.pitfalls.pitfall import pitfall
from advisor.types import Option, Pitfall, pitfall_texts


def model_notes(result: EstimateResult) -> list[Pitfall]:
    """A mixture of experts' total parameters (all held, a few active), a context asked
    past the model's window, and a TTS model's training sized as a generic fine-tune."""
    w, model = result.workload, result.model
    out: list[Pitfall] = []
    arch = model.arch
    if arch is not None and arch.experts:
        out.append(
            pitfall(
                "moe_total_params",
                total=f"{model.params_b:g}B",
                active=f"{model.active_params_b:g}B",
            )
        )
    asked = w.seq_len if w.mode.is_training else w.context_tokens
    if arch is not None and model.kind == Kind.llm and asked and asked > arch.max_context_tokens:
        out.append(
            pitfall(
                "beyond_model_context", model=model.name, max=arch.max_context_tokens, asked=asked
            )
        )
    spec = find_model(model.id) if model.id else None
    if spec is not None and spec.family == "tts" and w.mode.is_training:
        out.append(pitfall("tts_training_generic", model=model.name))
    return out


def vendor_floor_gb(result: EstimateResult) -> float | None:
    """A long-context model's own stated total VRAM (GB, over all cards) at the context
    asked (data/pitfalls.toml [vendor_long_context]), where it is past `past_tokens`;
    None elsewhere. The other cards offered hold at least it (recommend/search.py)."""
    row = pitfall_texts()["vendor_long_context"]["models"].get(result.model.id or "")
    asked = result.workload.context_tokens
    if row is None or result.workload.mode.is_training or not asked or asked <= row["past_tokens"]:
        return None
    return float(row["floor_gb"])


def vendor_long_context(
    result: EstimateResult, gpu: GpuSpec | None, pick: Option | None
) -> list[Pitfall]:
    """A long-context model's own stated total VRAM at its full window (data/pitfalls.toml
    [vendor_long_context], by catalog id), where the context asked is past `past_tokens`;
    the cards' total beside it."""
    floor = vendor_floor_gb(result)
    if floor is None:
        return []
    total = gpu.vram_gb * pick.count if gpu is not None and pick is not None else None
    return [
        pitfall(
            "vendor_long_context",
            model=result.model.name,
            floor=f"{floor:g}",
            total=f"{total:g}" if total is not None else "?",
        )
    ]


def low_bit_quality(result: EstimateResult) -> list[Pitfall]:
    """A weights format under 4 bits: what it costs in quality."""
    w = result.workload
    fmt = find_format(w.weights_format) if w.weights_format else None
    if fmt is not None and fmt.bits < 4.0:
        return [pitfall("low_bit_quality", fmt=fmt.id)]
    return []


def own_levers(result: EstimateResult) -> list[Pitfall]:
    """The pipeline's own memory levers from its authors' guide (data/pitfalls.toml
    [own_levers], by catalog model, else by family), for a card that is tight or short or
    that runs it offloaded."""
    spec = find_model(result.model.id) if result.model.id else None
    table = pitfall_texts()["own_levers"]
    levers = table.get("models", {}).get(spec.id if spec else "") or table["families"].get(
        spec.family if spec else ""
    )
    if levers is None:
        return []
    return [pitfall("own_levers", {"text": {"zh": levers["zh"], "en": levers["en"]}})]


def stack_levers(result: EstimateResult) -> list[Pitfall]:
    """The named program's own memory switches or trap for this model (data/pitfalls.toml
    [stack_levers]): an entry for the program, for training or inference as asked, written
    for this catalog model (ids) or its family."""
    w = result.workload
    spec = find_model(result.model.id) if result.model.id else None
    if spec is None or not w.framework:
        return []
    for entry in pitfall_texts()["stack_levers"]["entry"]:
        if entry["stack"] != w.framework.lower() or entry["training"] != w.mode.is_training:
            continue
        if spec.id in entry.get("ids", ()) or spec.family in entry.get("families", ()):
            said = pitfall("stack_levers", {"text": {"zh": entry["zh"], "en": entry["en"]}})
            return [said.model_copy(update={"severity": entry.get("severity", said.severity)})]
    return []


def video_state_unsized(result: EstimateResult) -> list[Pitfall]:
    """A streaming video segmenter (SAM 2) asked with no clip length: the figure is one
    image's, and the note says what a video adds per frame and the switches that hold it
    (data/models/sam2.toml; advisor/memory/video_state.py counts them when frames are named)."""
    w = result.workload
    spec = find_model(result.model.id) if result.model.id else None
    if spec is None or spec.video_state is None or w.video_frames or w.mode.is_training:
        return []
    s = spec.video_state
    return [
        pitfall(
            "video_state_unsized",
            frame_mib=f"{s.frame_bytes / 2**20:.0f}",
            size=s.image_size,
            tracked_kib=f"{s.tracked_frame_bytes / 1024:.0f}",
        )
    ]
