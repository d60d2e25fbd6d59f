"""Whisper base and tiny are catalog models (data/models/speech.toml, from their
config.json: base 6+6 layers of d_model 512, tiny 4+4 of 384; 74 M and 39 M parameters per
the openai/whisper README), so 'whisper base' is no longer read as Whisper large-v3 and a
base fine-tune is sized over its own 6 layers, not large-v3's 32."""

from __future__ import annotations

from advisor import catalog
from advisor.memory import estimate
from advisor.models.workload import Workload


def test_whisper_base_and_tiny_are_read_as_themselves():
    for name, model_id in (
        ("openai/whisper-base", "whisper-base"),
        ("whisper base", "whisper-base"),
        ("openai/whisper-tiny", "whisper-tiny"),
        ("whisper-tiny.en", "whisper-tiny"),
    ):
        spec = catalog.find_model(name)
        assert spec is not None and spec.id == model_id, name
    assert catalog.find_model("whisper").id == "whisper-large-v3"  # unchanged


def test_their_shapes_are_the_config_json_figures():
    base, tiny = catalog.models()["whisper-base"], catalog.models()["whisper-tiny"]
    assert (base.arch.layers, base.arch.hidden, base.arch.heads) == (6, 512, 8)
    assert (tiny.arch.layers, tiny.arch.hidden, tiny.arch.heads) == (4, 384, 6)
    assert (base.params_b, tiny.params_b) == (0.074, 0.039)


def test_a_base_fine_tune_checkpoints_its_own_six_layers():
    w = Workload(
        model="whisper-base",
        mode="full",
        weights_format="fp32",
        mixed_precision=True,
        batch_size=8,
        gradient_checkpointing=True,
    )
    acts = [t for t in estimate(w).estimate.terms if t.name == "activations"][0]
    assert acts.values["layers"] == 6
