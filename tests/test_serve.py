"""Serving N users (advisor/serving.py, advisor/kinds/serve.py): people or streams, the KV
cache at the context, per-user speed under batching, replicas and the vLLM flags."""

from __future__ import annotations

import json
import math

from advisor import Workload, catalog, estimate
from advisor.__main__ import main
from advisor.kinds import answer_kind
from advisor.parse import parse_query
from advisor.render import render
from advisor.serving import active_streams, plan_serving, serving_table, streams_from_qps

QWEN7 = Workload(model="qwen2.5-7b")


def test_people_are_a_share_generating_at_once_and_streams_all_are() -> None:
    share = serving_table()["active_share"]["people"]
    assert active_streams(30, people=True) == math.ceil(30 * share) == 9
    assert active_streams(30, people=False) == 30
    assert active_streams(1, people=True) == 1  # someone is always asking
    assert serving_table()["active_share"]["source"]


def test_qps_becomes_streams_by_littles_law() -> None:
    t = serving_table()
    seconds = t["qps"]["output_tokens"] / t["speed"]["target_tokens_per_s"]
    assert streams_from_qps(10) == math.ceil(10 * seconds)


def test_the_kv_cache_per_sequence_is_the_models_per_token_cache_times_the_context() -> None:
    plan = plan_serving(Workload(model="qwen2.5-7b", context_tokens=8192), 30, True, "USD")
    r = estimate(Workload(model="qwen2.5-7b", runtime="vllm", context_tokens=8192))
    assert plan.kv_bytes_per_sequence == int(r.estimate.kv_bytes_per_token * 8192)  # type: ignore[union-attr]
    # Qwen2.5-7B: 28 layers x 4 KV heads x 128 x 2 (K, V) x 2 B = 56 KiB per token (GQA)
    assert r.estimate.kv_bytes_per_token == 28 * 4 * 128 * 2 * 2  # type: ignore[union-attr]


def test_a_class_of_30_fits_one_24gb_card_at_a_readable_speed() -> None:
    plan = plan_serving(QWEN7, 30, True, "USD")
    best = plan.options[0]
    assert plan.concurrency == 9 and best.total_cards == 1 and best.meets_target
    assert best.tokens_per_s_per_user >= plan.target_tokens_per_s
    assert "--max-num-seqs 9" in best.flags and "--max-model-len 4096" in best.flags


def test_ten_thousand_users_get_many_replicas_not_one_giant_tensor_parallel_group() -> None:
    plan = plan_serving(Workload(model="llama-3-8b"), 10_000, True, "USD")
    assert plan.concurrency == 3000
    for o in plan.options:
        assert o.cards_per_replica <= 8 and o.replicas > 1
        # every active user is served: replicas x sequences per replica cover them
        assert o.replicas * o.max_num_seqs >= plan.concurrency
        assert o.max_num_seqs <= serving_table()["engine"]["max_num_seqs"]


def test_more_users_never_need_fewer_cards() -> None:
    cards = [
        plan_serving(QWEN7, n, True, "USD", gpu_ids=["h100-sxm"]).options[0].total_cards
        for n in (10, 100, 1000, 10_000)
    ]
    assert cards == sorted(cards) and cards[-1] > cards[0]


def test_a_replica_holds_no_more_sequences_than_its_kv_budget() -> None:
    from advisor.memory.runtimes.vllm import serving_fit

    plan = plan_serving(Workload(model="qwen2.5-14b", context_tokens=32768), 50, False, "USD")
    gpus = catalog.gpus()
    for o in plan.options:
        r = estimate(
            Workload(
                model="qwen2.5-14b",
                runtime="vllm",
                context_tokens=32768,
                num_gpus=o.cards_per_replica,
                parallelism="tp" if o.cards_per_replica > 1 else None,
            )
        )
        fit = serving_fit(r.estimate, 32768, int(gpus[o.gpu_id].usable_vram_gib * 2**30), 0.9)  # type: ignore[arg-type]
        assert o.max_num_seqs <= fit.max_concurrency


def test_a_named_card_is_planned_for_alone() -> None:
    a = answer_kind(parse_query("30个学生用 qwen2.5-7b 用 4090"), "CNY")
    assert {o.gpu_id for o in a.plan.options} == {"rtx-4090"}  # type: ignore[attr-defined]


def test_the_cli_json_carries_the_kind_the_concurrency_and_the_plan(capsys) -> None:  # noqa: ANN001
    assert main(["30个学生同时用 qwen2.5-7b", "--json", "--offline"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["question_kind"] == "serve"
    assert out["workload"]["users"] == 30 and out["workload"]["concurrency"] == 9
    assert out["serve"]["options"][0]["flags"].startswith("--max-model-len")


def test_zero_users_is_a_clear_error_in_both_languages(capsys) -> None:  # noqa: ANN001
    p = parse_query("0 users qwen2.5-7b")
    assert p.error is not None and p.error.detail == "concurrency"
    en = render("error", "en", error=p.error, parsed=p, plain=True)
    zh = render("error", "zh", error=p.error, parsed=p, plain=True)
    assert "at least" in en or "from 1" in en
    assert "用户数" in zh


def test_the_first_reply_stays_short_in_both_languages() -> None:
    for line in ("serve llama3-8b to 10000 users", "1万用户 llama3-8b", "QPS 10 qwen2.5-7b"):
        p = parse_query(line)
        for lang in ("en", "zh"):
            text = render("serve", lang, plain=True, result=answer_kind(p, "USD"), parsed=p)
            assert len(text) <= 900, (line, lang, len(text))
            assert "vllm serve" in text


def test_an_image_model_for_a_class_is_a_fit_with_its_batch_not_a_token_plan() -> None:
    p = parse_query("30个学生 用 sdxl 画图")
    assert p.question_kind == "fit" and p.workload.concurrency == 9  # type: ignore[union-attr]
