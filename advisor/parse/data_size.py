"""How much data a training line names -> the workload's train_tokens or train_images:
tokens or samples x epochs, or a vision dataset's training split x epochs."""

from __future__ import annotations

from typing import Any

from advisor.models.choices import Kind
from advisor.parse.scan import reject

# Epochs a run may take ("absurd epochs" is a clear error, not a 10^9-epoch answer).
MAX_EPOCHS = 100_000


def _place_images(
    fields: dict[str, Any], epochs: float | None, images: int, usual: int | None, assumed: list[str]
) -> None:
    """A vision dataset named on a training line: the images the run processes, the
    training split x epochs (the usual recipe's epochs when none is named, said so)."""
    if epochs is None:
        epochs = usual or 1
        assumed.append(f"epochs = {epochs:g}")
    if not 0 < epochs <= MAX_EPOCHS or images * epochs > 10**13:
        raise reject("bad_value", "epochs")
    fields["train_images"] = max(int(images * epochs), 1)


def place_data(fields: dict[str, Any], assumed: list[str], ignored: list[str]) -> None:
    tokens, samples, epochs = (fields.pop(k, None) for k in ("_tokens", "_samples", "_epochs"))
    schedule = fields.pop("_schedule", None)
    images, usual = fields.pop("_dataset_images", None), fields.pop("_usual_epochs", None)
    usual = fields.pop("_usual_epochs_by_model", {}).get(fields.get("model"), usual)
    vision = fields.get("kind") not in (None, Kind.llm)
    if images and tokens is None and samples is None and fields["mode"].is_training and vision:
        _place_images(fields, epochs, images, usual, assumed)
        return
    if samples is not None:
        tokens = samples * (fields.get("seq_len") or 1024)
        assumed.append(f"{samples:g} samples x {fields.get('seq_len') or 1024} tokens")
    if tokens is None and epochs is None:
        return
    if tokens is None and schedule is not None:
        # a detection schedule ("1x") is understood; with no data size it sets no duration
        assumed.append(f"schedule = {schedule}")
        return
    if not fields["mode"].is_training:
        ignored.append("data/epochs (not training)")
    elif tokens is None:
        ignored.append("epochs without a data size")
    else:
        total = int(tokens * (epochs or 1))
        if not 1 <= total <= 10**15:
            raise reject("bad_value", "train_tokens")
        fields["train_tokens"] = total
