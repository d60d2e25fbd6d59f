"""torchtune's loss as its code holds it (data/training_stacks.toml [loss]): its recipes'
LinearCrossEntropyLoss by default, CEWithChunkedOutputLoss eager or under torch.compile when
named, a standard cross-entropy when asked; read from a question as the case adapter reads
it from a case's notes."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.stacks import chunked_by_default, stack_loss_bytes
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.parse.canonical import canonical_query
from advisor.render import assumption

TOKENS, VOCAB = 4 * 2048, 128_256  # batch 4 x 2048 tokens, Llama 3's vocabulary


def _logits(**knobs: object) -> int:
    w = Workload(
        model="llama-3.1-8b", mode="qlora", seq_len=2048, batch_size=4, framework="torchtune"
    )
    return estimate(w.model_copy(update=knobs)).estimate.breakdown["logits"]


def test_the_default_loss_keeps_every_chunks_fp32_log_probs_and_one_chunks_scratch():
    """LinearCrossEntropyLoss (cross_entropy_loss.py ff7fe87), 8 chunks: log_softmax's fp32
    output saved for backward, 4 B a logit, plus the last chunk's 16-bit logits and fp32
    copy: 4 + 6 / 8 = 4.75 B, where the whole fp32 upcast holds 12 B."""
    assert stack_loss_bytes("torchtune", None, False) == (4.75, "stack_linear_ce")
    assert stack_loss_bytes("torchtune", None, True) == (4.75, "stack_linear_ce")  # not compiled
    assert _logits() == TOKENS * VOCAB * 4.75
    assert _logits(chunked_loss=False) == TOKENS * VOCAB * 12


def test_ce_with_chunked_output_loss_holds_the_16_bit_chunks_eager_and_less_compiled():
    """CEWithChunkedOutputLoss (ce_chunked_output_loss.py ce5433b): every chunk's 16-bit logits
    held until the recipe's `del logits`, beside the saved fp32 log-probs: 2 + 4 + 4 / 8;
    compiled, the graph saves its 16-bit input: 2 + 4 / 8."""
    assert stack_loss_bytes("torchtune", True, False) == (6.5, "stack_chunked_ce")
    assert stack_loss_bytes("torchtune", True, True) == (2.5, "stack_chunked_ce_compiled")
    assert _logits(chunked_loss=True, torch_compile=True) == TOKENS * VOCAB * 2.5


def test_only_torchtune_chunks_by_default():
    assert chunked_by_default("torchtune") and not chunked_by_default("llama-factory")
    assert stack_loss_bytes(None, None, False) is None
    assert stack_loss_bytes("torchtune", False, True) is None


def test_a_question_names_the_loss_and_compile_and_reads_back_the_same():
    for q, chunked, compiled in (
        ("torchtune qlora llama3 8b bs4 seq2048 on a 5070 Ti 16GB", None, False),
        ("torchtune qlora llama3 8b chunked CE torch.compile", True, True),
        ("torchtune lora llama2 7b standard CE batch 2", False, False),
        ("torchtune 分块交叉熵 qlora llama3 8b", True, False),
    ):
        p = parse_query(q)
        assert p.workload is not None and p.workload.framework == "torchtune"
        assert (p.workload.chunked_loss, p.workload.torch_compile) == (chunked, compiled)
        again = parse_query(canonical_query(p)).workload
        assert again is not None
        assert (again.chunked_loss, again.torch_compile) == (chunked, compiled)


def test_the_answer_says_which_loss_in_both_languages():
    r = estimate(Workload(model="llama-3.1-8b", mode="qlora", seq_len=2048, framework="torchtune"))
    assert {a.field: a.value for a in r.assumed}["loss_path"] == "stack_linear_ce"
    assert "LinearCrossEntropyLoss" in assumption("en", "loss_path", "stack_linear_ce")
    assert "「LinearCrossEntropyLoss」" in assumption("zh", "loss_path", "stack_linear_ce")


def test_the_case_adapter_reads_the_same_settings_from_notes():
    from checks.cases import case_to_workload

    def case(notes: str) -> dict:
        return {
            "id": "synthetic-torchtune-notes",
            "category": "llm_training",
            "model": {"name": "meta-llama/Llama-3.1-8B", "params_b": 8.03, "arch": {}},
            "workload": {
                "mode": "qlora",
                "weights_precision": "nf4",
                "batch_size": 2,
                "seq_len": 2048,
                "framework": "torchtune",
            },
            "notes": notes,
        }

    told, _ = case_to_workload(case("chunked CE, bf16, torch.compile on."))
    assert (told.chunked_loss, told.torch_compile) == (True, True)
    plain, _ = case_to_workload(case("standard CE over the 128K vocab, bf16, no compile."))
    assert (plain.chunked_loss, plain.torch_compile) == (False, False)
    unsaid, _ = case_to_workload(case("bf16."))
    assert (unsaid.chunked_loss, unsaid.torch_compile) == (None, False)


def test_no_chunked_loss_fix_is_offered_where_the_stack_chunks_already():
    """Telling torchtune to use 'a chunked cross-entropy' would name the loss it runs."""
    from tests.conftest import plain_answer

    q = "full fine-tune llama3 8b seq 4096 batch 4 on a 4090"
    assert "chunked / fused cross-entropy" in plain_answer(q, "en")
    assert "chunked / fused cross-entropy" not in plain_answer(f"torchtune {q}", "en")
