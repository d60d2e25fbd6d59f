"""Serving N users: "30个学生同时用 qwen2.5-7b", "serve llama3-8b to 10000 users", "并发 50",
"QPS 10". How many generate at once (a share of people, all of the streams), the KV cache
for them at the context, the speed each sees, the cards (replicas) needed and the vLLM flags
that realise it (advisor/serving.py). A card the user named is planned for alone."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor.catalog import find_model
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
    # AWQ/GPTQ: vLLM needs a repo of pre-quantized weights, not the 16-bit one named
    needs_quantized_repo: bool = False
    error: str | None = None  # the parse error's code, answered in the template's words

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
    repo = w.model if w.model and "/" in w.model else (spec.serve_repo if spec else None)
    return ServeAnswer(
        model_name=name,
        model_id=w.model,
        plan=plan,
        qps=w.qps,
        weights_format=w.weights_format,
        serve_repo=repo,
        needs_quantized_repo=quantization_flag(w.weights_format).endswith(("awq", "gptq")),
    )
