"""FSDP1's root unit (what no transformer block holds: embeddings, final norm, lm_head) is
gathered at the root's pre-forward and not freed in its post-forward
(torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard: `not state._is_root`), so it
stays whole on each card through the backward; data/distributed.toml [fsdp1]. Pinned to that
rule, not to a measured case."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.distributed import fsdp1_root_unsharded
from advisor.memory.transformer import embedding_params
from advisor.models.workload import Workload
from advisor.render import formula


def _run(**extra: object):
    fields: dict = {
        "model": "llama-2-7b",
        "mode": "qlora",
        "weights_format": "nf4",
        "batch_size": 1,
        "seq_len": 512,
        "gradient_checkpointing": True,
        "num_gpus": 2,
        "parallelism": "fsdp",
        "framework": "peft",
    }
    w = Workload(**{**fields, **extra})
    return estimate(w)


def _root(r) -> int:
    return next((t.bytes for t in r.estimate.terms if t.name == "fsdp_root_unit"), 0)


def test_the_root_unit_is_whole_beside_its_shard():
    r = _run()
    emb = embedding_params(r.model.arch)  # 32000 x 4096, embeddings and lm_head
    assert emb == 2 * 32000 * 4096
    assert _root(r) == int(emb * 2 * (1 - 1 / 2))  # 16-bit; its shard is in `weights`


def test_with_the_parameters_offloaded_the_whole_root_unit_is_on_the_card():
    r = _run(cpu_offload="params")
    assert _root(r) == int(embedding_params(r.model.arch) * 2)


def test_stacks_that_shard_the_embeddings_apart_or_do_not_use_fsdp1_add_nothing():
    assert fsdp1_root_unsharded("peft") and fsdp1_root_unsharded(None)
    assert not fsdp1_root_unsharded("torchtune") and not fsdp1_root_unsharded("torchtitan")
    assert _root(_run(framework="torchtune")) == 0
    one_card = estimate(
        Workload(model="llama-2-7b", mode="qlora", weights_format="nf4", framework="peft")
    )
    assert _root(one_card) == 0


def test_the_term_is_said_in_both_languages():
    term = next(t for t in _run().estimate.terms if t.name == "fsdp_root_unit")
    en, zh = formula("en", term), formula("zh", term)
    assert "root unit" in en and "262M" in en
    assert "根单元" in zh and "262M" in zh


def test_fp32_weights_are_gathered_in_the_mixed_precision_param_dtype():
    # accelerate's FSDP plugin sets MixedPrecision(param_dtype=bf16) for bf16 mixed precision
    # (data/training_stacks.toml [amp_fp32_weights]): the unsharded root is 16-bit, as the
    # blocks are; ATorch mixes by autocast alone and gathers its fp32 flat parameter.
    fp32 = dict(
        mode="full",
        weights_format="fp32",
        compute_dtype="bf16",
        mixed_precision=True,
        num_gpus=16,
    )
    hf = _run(framework="transformers", **fp32)
    atorch = _run(framework="atorch", **fp32)
    emb = embedding_params(hf.model.arch)
    assert _root(hf) == int(emb * 2 * (1 - 1 / 16))
    assert _root(atorch) == int(emb * 4 * (1 - 1 / 16))
    pure = _run(
        framework="transformers", **{**fp32, "compute_dtype": "fp32", "mixed_precision": False}
    )
    assert _root(pure) == int(emb * 4 * (1 - 1 / 16))  # fp32 compute: nothing casts them
