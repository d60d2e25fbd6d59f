"""Training time: "resnet50 imagenet 训练 90 epoch 要多久", "yolov8s coco how long",
"qwen2.5-7b lora 1b tokens 要多久". The recommendation's options (advisor/recommend), each
with its hours and the whole job's cost: an LLM run from tokens x 6 x params at the card's
MFU (data/capabilities.toml [speed]), a vision run from the dataset x epochs at the model's
published images/s (data/throughput.toml, advisor/throughput.py). A line with no amount of
data asks for it; a model nothing published covers gets its memory answer and says so."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import find_model
from advisor.constraints import card_mfu_scale, speed_constants, speed_source
from advisor.parse import ParsedQuery, vocab
from advisor.recommend import recommend_query
from advisor.recommend.speed import train_mfu
from advisor.throughput import images_per_s
from advisor.types import Option


class TrainTimeOption(BaseModel):
    gpu_id: str
    gpu_name: str
    count: int
    train_hours: float | None  # None: no published speed for this model on this card
    job_cost: float | None
    price_per_hour: float | None  # all cards
    currency: str | None
    platform: str | None
    mfu: float | None = None  # LLM runs: model FLOPs utilisation assumed on this card
    images_per_s: float | None = None  # vision runs: per card
    basis: str | None = None  # published | scaled_card | scaled_model (vision)
    source: str | None = None


class TrainTimeAnswer(BaseModel):
    model_name: str | None
    model_id: str | None
    task: str | None  # llm | vision; None: no amount of data named
    train_tokens: int | None = None
    train_images: int | None = None
    dataset: str | None = None
    epochs: float | None = None
    full: bool = True  # LLM: every weight trains (adapters: 2/3 of the FLOPs)
    options: list[TrainTimeOption] = []
    mfu_source: str | None = None
    # LLM runs: the MFU rule the options follow (datacenter, consumer, pcie), said under them
    mfu_rule: dict[str, float] | None = None
    # cards whose MFU is scaled by a measured matmul efficiency (capabilities.toml
    # [speed.card_mfu]): gpu, mfu, matmul and reference shares, said under the rows
    card_mfu: list[dict[str, Any]] = []
    error: str | None = None

    def public_json(self) -> dict[str, Any]:
        opts = [o.model_dump() for o in self.options]
        first = self.options[0] if self.options else None
        return {
            "train_time": {
                "model": self.model_id,
                "task": self.task,
                "train_tokens": self.train_tokens,
                "train_images": self.train_images,
                "dataset": self.dataset,
                "epochs": self.epochs,
                "options": opts,
                "mfu_source": self.mfu_source,
                "mfu_rule": self.mfu_rule,
                "card_mfu": self.card_mfu,
            },
            "train_hours": first.train_hours if first else None,
            "job_cost": first.job_cost if first else None,
            "error": self.error,
        }


def _dataset(parsed: ParsedQuery) -> tuple[str | None, int | None]:
    """The dataset named ("dataset = imagenet 224x224" among the assumptions) and its size."""
    for a in parsed.assumed:
        if a.startswith("dataset = "):
            name = a.removeprefix("dataset = ").rsplit(" ", 1)[0]
            for row in vocab.load("datasets")["dataset"]:
                if vocab.squash(name) in {vocab.squash(n) for n in row["names"]}:
                    return name, row.get("train_images")
    return None, None


def _option(o: Option, model_id: str | None, px: int, task: str) -> TrainTimeOption:
    gpu = catalog.gpus().get(o.gpu_id)
    price = o.price_per_hour
    out = TrainTimeOption(
        gpu_id=o.gpu_id,
        gpu_name=o.gpu_name,
        count=o.count,
        train_hours=o.train_hours,
        job_cost=o.job_cost,
        price_per_hour=price.amount if price else None,
        currency=price.currency if price else None,
        platform=price.platform if price else None,
    )
    if gpu is not None and task == "llm":
        out.mfu = round(train_mfu(gpu, o.count), 3)
    if gpu is not None and task == "vision" and (t := images_per_s(model_id, gpu, px)):
        out.images_per_s, out.basis, out.source = t.images_per_s, t.basis, t.source
    return out


def answer(parsed: ParsedQuery, currency: str) -> TrainTimeAnswer:
    w = parsed.workload
    if not parsed.ok or w is None:
        code = parsed.error.code if parsed.error else "no_model"
        return TrainTimeAnswer(model_name=None, model_id=None, task=None, error=code)
    spec = find_model(w.model) if w.model else None
    name = spec.name if spec else (f"{w.params_b:g}B" if w.params_b else "?")
    task = "vision" if w.train_images else "llm" if w.train_tokens else None
    ans = TrainTimeAnswer(model_name=name, model_id=w.model, task=task)
    if task is None:
        return ans  # the template asks for the amount of data
    dataset, size = _dataset(parsed)
    ans.train_tokens, ans.train_images, ans.dataset = w.train_tokens, w.train_images, dataset
    if size and w.train_images:
        ans.epochs = round(w.train_images / size, 2)
    ans.full = w.tuning.value in ("full", "pretrain")
    if task == "llm":
        c = speed_constants()
        ans.mfu_source = speed_source()
        ans.mfu_rule = {
            "datacenter": c["mfu_datacenter"],
            "consumer": c["mfu_consumer"],
            "pcie": c["mfu_pcie_multi_card"],
        }
    rec = recommend_query(parsed, default_currency=currency)
    px = max(w.image_width or 0, w.image_height or 0)
    pool = [o for o in rec.options if o.fits and o.train_hours]
    by_cost = sorted(pool, key=lambda o: (_or_inf(o.job_cost), _or_inf(o.train_hours)))
    fastest = min(pool, key=lambda o: _or_inf(o.train_hours), default=None)
    named = [rec.named] if rec.named is not None else []
    chosen: list[Option] = []
    for o in named + by_cost[:2] + ([fastest] if fastest is not None else []):
        if all((o.gpu_id, o.count) != (c.gpu_id, c.count) for c in chosen):
            chosen.append(o)
    if not chosen:  # no published speed for this model: its memory picks, without hours
        chosen = rec.options[:2]
    ans.options = [_option(o, w.model, px, task) for o in chosen[:3]]
    if task == "llm":
        ans.card_mfu = _card_mfu(ans.options)
    return ans


def _card_mfu(options: list[TrainTimeOption]) -> list[dict[str, Any]]:
    """The rows' cards whose MFU follows their measured matmul efficiency, once each."""
    rows = card_mfu_scale()
    out: list[dict[str, Any]] = []
    for o in options:
        row = rows.get(o.gpu_id)
        if row is not None and all(n["gpu"] != o.gpu_name for n in out):
            out.append(
                {
                    "gpu": o.gpu_name,
                    "mfu": o.mfu,
                    "matmul": row["matmul_efficiency"],
                    "reference": row["reference_matmul_efficiency"],
                    "source": row["source"],
                }
            )
    return out


def _or_inf(x: float | None) -> float:
    return x if x is not None else float("inf")


__all__ = ["TrainTimeAnswer", "answer"]
