"""The library's own quantize call on a loaded model (torchao `quantize_`, optimum-quanto
`quantize`) replaces the untied lm_head Linear with the rest; transformers' from_pretrained
quantizers keep it in the load dtype (data/quantizers.toml own_call_quantizes_lm_head).

Pinned to torchao's README table (generate.py, 'Model Size (GB)' counted without the
embeddings, commit 505edc1): Llama-2-7B int8wo 6.62 GB, Llama-3-8B int8wo 7.52 GB; with a
bf16 lm_head they would be 6.74 and 8.03."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import estimate
from advisor.memory.quantizers import kept_bytes_per_weight, lm_head_quantized_bytes
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.workload import Workload
from advisor.render import assumption


def _layers_and_lm_head_gb(model: str, quantize_after_load: bool) -> float:
    """Weights less the input embedding (the README's ignore_embeddings), decimal GB."""
    spec = catalog.find_model(model)
    arch = spec.arch
    params = spec.params_b * 1e9
    weights = estimate_weight_bytes(params, arch, "torchao-int8", kept_bytes_per_weight("bf16"))
    weights -= lm_head_quantized_bytes(
        arch, params, "torchao-int8", "bf16", quantize_after_load, Breakdown()
    )
    return (weights - arch.vocab * arch.hidden * 2) / 1e9


@pytest.mark.parametrize(("model", "readme_gb"), [("llama-2-7b", 6.62), ("llama-3-8b", 7.52)])
def test_quantize_call_takes_the_lm_head_as_torchaos_model_size_shows(model, readme_gb):
    assert _layers_and_lm_head_gb(model, True) == pytest.approx(readme_gb, rel=0.01)
    # from_pretrained's TorchAoConfig keeps it bf16: the README figure cannot come from that
    assert _layers_and_lm_head_gb(model, False) > readme_gb * 1.015


def test_the_answer_says_the_lm_head_was_quantized_and_from_pretrained_keeps_it():
    own = estimate(
        Workload(model="llama-3-8b", weights_format="torchao-int8", quantize_after_load=True)
    )
    loaded = estimate(Workload(model="llama-3-8b", weights_format="torchao-int8"))
    fields = {a.field: a for a in own.assumed}
    assert "lm_head_quantized" in fields
    assert "lm_head_quantized" not in {a.field for a in loaded.assumed}
    for lang, word in (("en", "lm_head too"), ("zh", "输出层一起量化")):
        a = fields["lm_head_quantized"]
        assert word in assumption(lang, a.field, a.value)
    # bitsandbytes has no own call on a loaded model here: its lm_head stays 16-bit
    bnb = estimate(Workload(model="llama-3-8b", weights_format="nf4", quantize_after_load=True))
    assert "lm_head_quantized" not in {a.field for a in bnb.assumed}


def test_torchao_eager_int8_dequantizes_the_quantized_lm_head_the_widest_linear():
    """Run eagerly, int8 weight-only copies each weight to bf16 per call; once the lm_head
    is int8 too it is the widest Linear (128256 x 4096 x 2 B = 1.05 GB on Llama-3.1-8B,
    against the MLP's 14336 x 4096 x 2 B). A 128k context keeps the run above the 16-bit
    load, so the run's own terms are the breakdown."""

    def dequant(qal: bool) -> int:
        w = Workload(
            model="llama-3.1-8b",
            weights_format="torchao-int8",
            quantize_after_load=qal,
            context_tokens=131072,
        )
        terms = {t.name: t.bytes for t in estimate(w).estimate.terms}
        return terms["dequant_buffer"]

    assert dequant(False) == 14336 * 4096 * 2
    assert dequant(True) == 128256 * 4096 * 2
