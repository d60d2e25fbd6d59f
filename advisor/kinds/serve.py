"""Serving N users: "30个学生同时用 qwen2.5-7b", "serve llama3-8b to 10000 users", "并发 50",
"QPS 10". How many generate at once (a share of people, all of the streams), the KV cache
for them at the context, the speed each sees, the cards (replicas) needed and the vLLM flags
that realise it (advisor/serving.py). A card the user named is planned for alone."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import find_model
from advisor.models.workload import Workload
from advisor.parse import ParsedQuery
from advisor.serving import ServePlan, plan_serving, quantization_flag


class ServeAnswer(BaseModel):
    model_name: str | None  # None: no model read (the answer asks for it)
    model_id: str | None
    plan: ServePlan | None
    qps: float | None = None
    weights_format: str | None = None  # as asked ("int4"): the replicas are planned in it
    # what `vllm serve` loads: the catalog entry's chat / instruct repo (a base repo has no
    # chat template), else the repo id asked; None: unknown, the template writes the name
    serve_repo: str | None = None
    # AWQ/GPTQ: vLLM needs a repo of pre-quantized weights, not the 16-bit one named; False
    # where serve_repo is the vendor's own quantized repo (catalog quantized_repos)
    needs_quantized_repo: bool = False
    # no format named, a 16-bit model: fp8 weights on a card with native fp8 (Ada, Hopper,
    # Blackwell) serve the load on fewer cards than 16 bits, so the plan is in fp8, said so:
    # the card that runs it natively and the cards the same load takes in 16 bits
    fp8_native_on: str | None = None
    cards_at_16bit: int | None = None
    error: str | None = None  # the parse error's code, answered in the template's words
    # "用 4 张 4090 够吗": the count of the card named, answered beside the plan (enough or
    # not, in the plan's format and, for an fp8 plan, in 16 bits); None when not asked
    asked_cards: int | None = None
    asked_gpu_id: str | None = None

    def public_json(self) -> dict[str, Any]:
        if self.plan is None:
            return {"serve": None, "error": self.error}
        plan = self.plan
        return {
            "workload": {
                "model": self.model_id,
                "concurrency": plan.concurrency,
                "users": plan.users,
                "users_are_people": plan.people,
                "qps": self.qps,
                "context_tokens": plan.context_tokens,
            },
            "serve": plan.model_dump(),
        }


def answer(parsed: ParsedQuery, currency: str) -> ServeAnswer:
    w = parsed.workload
    if not parsed.ok or w is None:
        code = parsed.error.code if parsed.error else "no_model"
        return ServeAnswer(model_name=None, model_id=None, plan=None, error=code)
    spec = find_model(w.model) if w.model else None
    name = spec.name if spec else (f"{w.params_b:g}B" if w.params_b else "?")
    users = w.users or w.concurrency or 1
    people = w.users_are_people
    if w.qps:
        users, people = w.concurrency or 1, False
    cards = [parsed.gpu_id] if parsed.gpu_id else []
    cards += [gpu for gpu, _ in parsed.other_cards]
    plan = plan_serving(w, users, people, currency, gpu_ids=cards or None)
    fp8 = _fp8_before_replicas(w, users, people, currency, cards, plan)
    cards_at_16bit = plan.options[0].total_cards if fp8 is not None and plan.options else None
    if fp8 is not None:
        plan, w = fp8, w.model_copy(update={"weights_format": "fp8"})
    repo = w.model if w.model and "/" in w.model else (spec.serve_repo if spec else None)
    quantized = quantization_flag(w.weights_format).endswith(("awq", "gptq"))
    if quantized and spec is not None and repo == spec.serve_repo:
        # AWQ / GPTQ: the vendor's pre-quantized repo where the catalog has it ("int4" is
        # served as AWQ: data/serving.toml [quantization])
        fmt = "awq-4bit" if w.weights_format == "int4" else w.weights_format or ""
        own = spec.quantized_repos.get(fmt)
        repo, quantized = (own, False) if own else (repo, quantized)
    return ServeAnswer(
        model_name=name,
        model_id=w.model,
        plan=plan,
        qps=w.qps,
        weights_format=w.weights_format,
        serve_repo=repo,
        needs_quantized_repo=quantized,
        fp8_native_on=plan.options[0].gpu_name if fp8 is not None else None,
        cards_at_16bit=cards_at_16bit,
        asked_cards=parsed.gpu_count if parsed.gpu_id and parsed.gpu_count else None,
        asked_gpu_id=parsed.gpu_id,
    )


def _fp8_before_replicas(
    w: Workload, users: int, people: bool, currency: str, cards: list[str], plan: ServePlan
) -> ServePlan | None:
    """No weight format named, a 16-bit model, and the plan takes more than one card of a
    card with native fp8 (Ada, Hopper, Blackwell: vLLM --quantization fp8 quantizes on
    load, and a decode step reads half the bytes): the same load in fp8 where it takes
    fewer cards (for no more per hour where no card was named), else None. 7B for 200
    people on L4s: 2 cards in fp8, not 15 replicas of bf16."""
    spec = find_model(w.model) if w.model else None
    if w.weights_format is not None or not plan.options:
        return None
    if ((spec.default_format if spec else None) or "bf16") not in ("bf16", "fp16"):
        return None
    top = plan.options[0]
    gpus = catalog.gpus()
    if top.total_cards <= 1 or not gpus[top.gpu_id].fp8_supported:
        return None
    native = [g for g in cards if gpus[g].fp8_supported] or [
        g.id for g in catalog.rented_gpus() if g.fp8_supported
    ]
    fp8w = w.model_copy(update={"weights_format": "fp8"})
    fp8 = plan_serving(fp8w, users, people, currency, gpu_ids=native)
    if not fp8.options:
        return None
    best = fp8.options[0]
    if best.total_cards >= top.total_cards or (best.meets_target < top.meets_target):
        return None
    dearer = (best.price_per_hour or 0) > (top.price_per_hour or float("inf"))
    return None if dearer and not cards else fp8
