"""GPT-2's attention keeps its causal mask as a buffer on the GPU: transformers
modeling_gpt2.py GPT2Attention.__init__ `register_buffer("bias", torch.tril(torch.ones(
(max_positions, max_positions), dtype=torch.bool)))`, one bool n_positions x n_positions
matrix per layer (Architecture.causal_mask_buffer, data/runtimes.toml [transformers]
causal_mask_buffer_source, data/hub_config.toml [causal_mask_buffer])."""

from __future__ import annotations

from advisor.hubspec.arch import code_flag
from advisor.memory import estimate
from advisor.memory.runtimes import runtime_data
from advisor.models.choices import Mode, Runtime
from advisor.models.workload import Workload

MIB = 2**20


def _terms(model: str, **kw: object) -> dict[str, int]:
    w = Workload(model=model, **{"mode": Mode.inference, **kw})
    est = estimate(w).estimate
    assert est is not None
    return {t.name: t.bytes for t in est.terms}


def test_gpt2_small_keeps_twelve_mib_of_bool_causal_masks_beside_its_weights():
    # 12 layers x 1024 x 1024 x 1 B, as GPT2Attention registers them
    assert _terms("gpt2", runtime=Runtime.transformers)["mask_buffers"] == 12 * MIB
    assert _terms("gpt2-xl", runtime=Runtime.transformers)["mask_buffers"] == 48 * MIB
    # resident with the weights: a model only loaded holds them too
    loaded = _terms("gpt2", runtime=Runtime.transformers, mode=Mode.load_only)
    assert loaded["mask_buffers"] == 12 * MIB
    assert "modeling_gpt2.py" in runtime_data()["transformers"]["causal_mask_buffer_source"]


def test_only_the_models_whose_code_registers_the_mask_and_only_under_transformers():
    assert "mask_buffers" not in _terms("qwen2.5-0.5b", runtime=Runtime.transformers)
    assert "mask_buffers" not in _terms("gpt2", runtime=Runtime.vllm)
    assert code_flag({"model_type": "gpt2"}, "causal_mask_buffer")
    assert not code_flag({"model_type": "llama"}, "causal_mask_buffer")
