"""One line of Chinese, English or mixed text -> a Workload, or a parse error with a hint.

Generous with what it accepts, strict about what it does not understand: every span it
uses is listed in `understood`, every leftover word in `ignored`, every default it picks
in `assumed`. Patterns are applied in a fixed order; each consumes its span so a number is
never read twice (the "2" of "2卡" is cards, not a batch size).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from advisor import catalog
from advisor.models import Attention, Kind, Mode, Offload, Optimizer, Parallelism, Workload

MAX_QUERY_CHARS = 500
MAX_PARAMS_B = 20_000  # ~20T: beyond anything trained; larger is a typo


class Budget(BaseModel):
    amount: float
    currency: str  # CNY or USD
    per_hour: bool  # False: a total budget for the job


class ParseError(BaseModel):
    code: str  # empty | too_long | unknown_model | unknown_format | bad_value | no_model
    detail: str = ""  # the offending text, for the template
    suggestions: list[str] = []


class ParsedQuery(BaseModel):
    workload: Workload | None = None
    gpu_id: str | None = None
    gpu_count: int | None = None
    vram_gib: float | None = None  # a bare memory size ("我只有 12g 显存"): a card with that much
    budget: Budget | None = None
    understood: list[str] = []
    ignored: list[str] = []
    assumed: list[str] = []
    error: ParseError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.workload is not None


MODE_WORDS: list[tuple[str, str]] = [
    (r"qlora", "qlora"),
    (r"dora", "dora"),
    (r"lora", "lora"),
    (r"ia3", "ia3"),
    (r"prompt[- ]?tuning", "prompt_tuning"),
    (r"预训练|pre-?train(ing)?|from scratch|从头训练", "pretrain"),
    (
        r"全参(数)?(微调)?|全量(微调)?|full[- ]?(fine[- ]?tune|ft|finetune)?\b|冻结微调|freeze",
        "full",
    ),
    (r"微调|fine[- ]?tun(e|ing)|finetun(e|ing)|\bft\b|\bsft\b", "full"),
    (r"训练|train(ing)?", "full"),
    (r"推理|部署|聊天|对话|inference|infer|chat|serv(e|ing)|deploy|generate|生成文本", "inference"),
]
KIND_WORDS: list[tuple[str, Kind, str]] = [
    (
        r"画图|生成图片|出图|文生图|绘图|txt2img|text-to-image|image generation",
        Kind.diffusion,
        "image",
    ),
    (r"渲染|render(ing)?|blender|3d|建模", Kind.rendering, "render"),
    (r"视频|video|转码|transcod(e|ing)|剪辑", Kind.video, "video"),
    (r"仿真|simulation|模拟", Kind.simulation, "simulation"),
    (r"作业|课程|course ?work|homework|assignment", Kind.classic, "coursework"),
]
STOPWORDS = {
    "on",
    "with",
    "a",
    "an",
    "the",
    "for",
    "in",
    "to",
    "of",
    "i",
    "want",
    "need",
    "run",
    "my",
    "how",
    "much",
    "vram",
    "gpu",
    "model",
    "please",
    "using",
    "use",
    "what",
    "which",
    "can",
    "is",
    "and",
    "at",
    "by",
    "me",
    "do",
    "it",
    "have",
    "we",
    "our",
    "lab",
    "用",
    "跑",
    "的",
    "在",
    "想",
    "要",
    "我",
    "一下",
    "需要",
    "多少",
    "显存",
    "模型",
    "请问",
    "个",
    "做",
    "我有",
    "想跑",
    "帮我",
    "看看",
    "一个",
    "和",
    "跟",
    "上",
    "能",
    "吗",
    "么",
    "怎么",
    "选",
    "卡",
    "租",
    "张",
    "出",
    "图",
    "/vram",
    "vram?",
}
FAMILY_PREFIXES = (
    "llama",
    "qwen",
    "deepseek",
    "ds-",
    "mistral",
    "mixtral",
    "glm",
    "chatglm",
    "yi-",
    "internlm",
    "baichuan",
    "gemma",
    "phi",
    "gpt",
    "sd",
    "flux",
    "bert",
    "resnet",
    "vit",
    "t5",
    "qwq",
    "roberta",
)


@dataclass
class _Scan:
    text: str
    understood: list[str] = field(default_factory=list)

    def take(self, pattern: str, flags: int = re.I) -> re.Match[str] | None:
        m = re.search(pattern, self.text, flags)
        if m:
            self.understood.append(m.group(0).strip())
            self.text = self.text[: m.start()] + " " * (m.end() - m.start()) + self.text[m.end() :]
        return m

    def take_if(self, pattern: str, accept, flags: int = re.I):  # noqa: ANN001
        """Consume the first match for which accept(match) returns something truthy."""
        for m in re.finditer(pattern, self.text, flags):
            value = accept(m)
            if value:
                self.understood.append(m.group(0).strip())
                self.text = (
                    self.text[: m.start()] + " " * (m.end() - m.start()) + self.text[m.end() :]
                )
                return m, value
        return None, None

    def take_all(self, pattern: str, flags: int = re.I) -> list[re.Match[str]]:
        out = []
        while (m := self.take(pattern, flags)) is not None:
            out.append(m)
        return out


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)  # full-width digits and letters -> ASCII
    text = text.replace("×", "x").replace("＊", "*")
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text.strip()


_SCALE = {"": 1.0, "k": 1e3, "万": 1e4, "m": 1e6, "亿": 1e8, "b": 1e9}


def _number(s: str) -> float:
    return float(s.replace(",", ""))


def parse_query(text: str) -> ParsedQuery:
    """Parse one line. Never raises: bad input comes back as `error`."""
    try:
        return _parse(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "query"
        return ParsedQuery(error=ParseError(code="bad_value", detail=loc))
    except (ValueError, OverflowError) as exc:
        return ParsedQuery(error=ParseError(code="bad_value", detail=str(exc)[:80]))


def _parse(raw: str) -> ParsedQuery:
    if raw is None or not raw.strip():
        return ParsedQuery(error=ParseError(code="empty"))
    if len(raw) > MAX_QUERY_CHARS:
        return ParsedQuery(error=ParseError(code="too_long", detail=str(MAX_QUERY_CHARS)))
    s = _Scan(_normalize(raw).lower())
    s.text = re.sub(r"^/\w+(@\w+)?", " ", s.text)  # a leading /vram or /vram@BotName
    fields: dict = {}
    out = ParsedQuery()

    # --- budget (before sizes: "3元/小时" must not read as a size) ---
    out.budget = _take_budget(s)

    # --- GPU named, with a count ---
    gpu_pat = r"([a-z]*\d{2,4}[a-z]*(?:\s?(?:d|ti|super|pcie|sxm|nvl))?(?:\s?\d{2,3}\s?g(?:b)?)?|a100|h100|h800|h200|h20|a800|v100|t4|l4|l40s?|l20|a10g?|a40|b200|mi300x|910b)"
    m, gpu = s.take_if(r"\bgpu:([a-z0-9.\-]+)", lambda m: catalog.gpus().get(m.group(1)))
    if gpu:
        out.gpu_id = gpu.id
    m, gpu = s.take_if(
        r"(\d+)\s*(?:x|\*|张)\s*" + gpu_pat + r"(?![\d.])", lambda m: catalog.find_gpu(m.group(2))
    )
    if gpu and out.gpu_id is None:
        out.gpu_id, out.gpu_count = gpu.id, int(m.group(1))
    if out.gpu_id is None:
        m, gpu = s.take_if(
            r"(?:\bon|用|在|\bwith|\bhave|有)\s*(?:an?\s+|一张|一块|两张)?"
            + gpu_pat
            + r"(?:\s*[x*]\s*(\d+))?",
            lambda m: catalog.find_gpu(m.group(1)),
        )
        if gpu:
            out.gpu_id = gpu.id
            if m.group(2):
                out.gpu_count = int(m.group(2))
    if m := s.take(r"(\d+)\s*(?:卡|张卡|块卡|gpus?|cards?)\b|(?<![\w.])x\s?(\d+)\b"):
        out.gpu_count = int(m.group(1) or m.group(2))
    if out.gpu_count is not None and not 1 <= out.gpu_count <= 4096:
        return ParsedQuery(error=ParseError(code="bad_value", detail="num_gpus"))

    # --- HF id org/name ---
    spec = None
    m, spec = s.take_if(r"\b[\w.\-]+/([\w.\-]+)", lambda m: catalog.find_model(m.group(1)))

    # --- model names from the catalog: longest span of up to 4 words wins ---
    if spec is None:
        spec = _find_model_span(s)

    # --- kv cache dtype (before formats: "kv fp8" is not fp8 weights) ---
    if m := s.take(r"kv\s*(?:cache)?\s*[:=]?\s*(fp8|q8_0|q4_0|fp16|bf16)"):
        fields["kv_cache_dtype"] = m.group(1)
    # --- 8-bit optimizers before formats: "8bit adam" is not an int8 model ---
    if s.take(r"8[- ]?bit\s*adam(?:w)?|adam(?:w)?[- ]?8[- ]?bit|adamw8bit|paged[_ ]adamw"):
        fields["optimizer"] = Optimizer.adamw_8bit

    # --- formats ---
    fmt_tokens = r"(q\d_k(?:_[sml])?|q\d_\d|fp\d+|bf16|int\d+|\d+\s?-?bits?|nf4|fp4|gptq|awq|mxfp4|gguf|qint\d|qfloat8|半精度|全精度|单精度|8bit adam)"
    for m in re.finditer(fmt_tokens, s.text):
        token = m.group(1).replace(" ", "")
        if token == "8bitadam":
            continue
        if re.fullmatch(r"\d+-?bits?", token):
            token = {"4": "int4", "8": "int8", "16": "fp16", "32": "fp32"}.get(
                re.match(r"\d+", token).group(0), token
            )  # type: ignore[union-attr]
        fmt = catalog.find_format(token)
        if fmt is None:
            return ParsedQuery(
                error=ParseError(
                    code="unknown_format", detail=m.group(1), suggestions=sorted(catalog.formats())
                )
            )
        if "weights_format" not in fields:
            fields["weights_format"] = fmt.id
    s.take_all(fmt_tokens)

    # --- training data: tokens or samples, times epochs (before sizes: "30m tokens" is data) ---
    if m := s.take(
        r"(?:data(?:set)?|数据集?|语料)\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(k|m|b|万|亿)?\s*(?:tokens?)?(?![\w.])|(\d+(?:\.\d+)?)\s*(k|m|b|万|亿)\s*tokens?\b"
    ):
        value, unit = _number(m.group(1) or m.group(3)), (m.group(2) or m.group(4) or "")
        fields["_tokens"] = value * _SCALE[unit]
    elif m := s.take(r"(\d+(?:\.\d+)?)\s*(k|万)?\s*(?:samples?|examples?|条(?:数据|样本)?)"):
        fields["_samples"] = _number(m.group(1)) * _SCALE[m.group(2) or ""]
    if m := s.take(r"(\d+(?:\.\d+)?)\s*(?:epochs?|轮|个epoch)"):
        fields["_epochs"] = _number(m.group(1))

    # --- knobs ---
    if m := s.take(
        r"(?:ctx|context|上下文|seq(?:_?len)?|序列长度|序列|长度|max_len)\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(k)?\b"
    ):
        fields["_ctx"] = int(_number(m.group(1)) * (1024 if m.group(2) else 1))
    if m := s.take(
        r"(?:bs|batch(?:[_ ]?size)?|批大小|批量|批次|并发(?:数)?|concurrency)\s*[:=：]?\s*(\d+)"
    ):
        fields["batch_size"] = int(m.group(1))
        if not 1 <= fields["batch_size"] <= 65_536:
            return ParsedQuery(error=ParseError(code="bad_value", detail="batch_size"))
    if m := s.take(r"(?:\br\s*=\s*|\brank\s*[:=]?\s*|\br)(\d{1,4})\b"):
        fields["lora_rank"] = int(m.group(1))
    if m := s.take(r"(\d{3,5})\s*[x*]\s*(\d{3,5})"):
        fields["image_width"], fields["image_height"] = int(m.group(1)), int(m.group(2))
    elif m := s.take(r"(\d{3,5})\s*(?:px|p\b|分辨率)"):
        fields["image_width"] = fields["image_height"] = int(m.group(1))
    if m := s.take(r"(?<![a-z\d])(\d+)\s*(?:张(?:图|图片)?|images?|imgs?|pics?)\b"):
        fields["images_per_prompt"] = int(m.group(1))
    if m := s.take(r"\b(adamw|adam|sgd|adafactor|lion)\b"):
        word = {"adam": "adamw", "sgd": "sgd_momentum"}.get(m.group(1), m.group(1))
        fields.setdefault("optimizer", Optimizer(word))
    if s.take(r"no[- ]?gc|不用梯度检查点|关闭梯度检查点"):
        fields["gradient_checkpointing"] = False
    elif s.take(r"\bgc\b|梯度检查点|gradient[_ ]checkpointing|activation checkpointing"):
        fields["gradient_checkpointing"] = True
    if m := s.take(r"\b(zero[- ]?[123]|fsdp|ddp|deepspeed|tp|张量并行|流水线并行|pp)\b"):
        word = m.group(1).replace("-", "").replace(" ", "")
        fields["parallelism"] = {
            "deepspeed": Parallelism.zero3,
            "张量并行": Parallelism.tp,
            "流水线并行": Parallelism.pp,
        }.get(word) or Parallelism(word)
    if s.take(r"offload|卸载"):
        fields["cpu_offload"] = Offload.optimizer
    if m := s.take(r"\b(flash[- ]?attn|flash[- ]?attention|flash|sdpa|eager)\b"):
        fields["attention"] = Attention.flash if "flash" in m.group(1) else Attention(m.group(1))
    if m := s.take(
        r"\b(vllm|sglang|ollama|llama\.cpp|transformers|torchtune|unsloth|llama-factory)\b"
    ):
        fields["framework"] = m.group(1)

    # --- what is done ---
    mode: str | None = None
    for pattern, value in MODE_WORDS:
        if s.take_all(pattern):
            mode = mode or value
    kind: Kind | None = None
    for pattern, value, _ in KIND_WORDS:
        if s.take_all(pattern):
            kind = kind or value

    # --- a bare size (after model names: "qwen2.5-7b" is a name, "7b" a size) ---
    params_b: float | None = None
    if m := s.take(r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*x\s*(\d+(?:\.\d+)?)\s*b\b"):
        params_b = _number(m.group(1)) * _number(m.group(2))
    elif m := s.take(
        r"(?<![a-z0-9.])(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*(billion|bn|b|million|m|千亿|万亿|亿)(?![a-z])"
    ):
        value, unit = _number(m.group(1)), m.group(2)
        params_b = value * {"m": 1e-3, "million": 1e-3, "亿": 0.1, "千亿": 100, "万亿": 1000}.get(
            unit, 1.0
        )
    if params_b is not None and 0 < params_b < 1e6:
        params_b = float(f"{params_b:.6g}")
    if params_b is not None and not 0 < params_b <= MAX_PARAMS_B:
        return ParsedQuery(error=ParseError(code="bad_value", detail="params_b"))

    # --- a bare long context like "128k", bare resolution for image models ---
    if "_ctx" not in fields and (m := s.take(r"\b(\d+(?:\.\d+)?)\s*k\b")):
        fields["_ctx"] = int(_number(m.group(1)) * 1024)
    if (
        spec is not None
        and spec.kind == Kind.diffusion
        and "image_width" not in fields
        and (m := s.take(r"\b(\d{3,4})\b"))
    ):
        fields["image_width"] = fields["image_height"] = int(m.group(1))

    # --- leftovers ---
    leftovers = [t for t in re.split(r"[\s,，。;；、:：!！?？()（）·]+", s.text) if t]
    ignored = [t for t in leftovers if t not in STOPWORDS]
    # A word that looks like a model we do not know is an error, not an ignored word.
    if spec is None:
        for word in ignored:
            if (
                word.startswith(FAMILY_PREFIXES)
                and len(word) >= 3
                and (params_b is None or re.search(r"\d", word))
            ):
                return ParsedQuery(
                    error=ParseError(
                        code="unknown_model",
                        detail=word,
                        suggestions=catalog.close_model_names(word),
                    )
                )
    out.understood = s.understood
    out.ignored = [raw_word for raw_word in ignored][:20]

    if (
        spec is None
        and params_b is None
        and kind not in (Kind.rendering, Kind.video, Kind.simulation, Kind.classic)
    ):
        if kind == Kind.diffusion:
            spec = catalog.find_model("sdxl")
            out.assumed.append("model = sdxl")
        else:
            return ParsedQuery(
                error=ParseError(code="no_model"), understood=out.understood, ignored=out.ignored
            )
    if spec is None and kind == Kind.classic and params_b is None:
        spec = catalog.find_model("small-cnn")
        out.assumed.append("model = small-cnn")

    # --- assemble the workload ---
    if spec is not None:
        fields["model"] = spec.id
        kind = spec.kind
    elif params_b is not None:
        fields["params_b"] = params_b
    if kind is not None:
        fields["kind"] = kind
    if mode is None:
        if kind in (Kind.classic,):
            mode = "full"
            out.assumed.append("mode = full (training)")
        else:
            mode = "inference"
            out.assumed.append("mode = inference")
    if mode == "qlora" and "weights_format" not in fields:
        fields["weights_format"] = "nf4"
    fields["mode"] = Mode(mode)
    ctx = fields.pop("_ctx", None)
    if ctx is not None:
        if not 1 <= ctx <= 10_000_000:
            return ParsedQuery(error=ParseError(code="bad_value", detail="context_tokens"))
        if spec is not None and spec.arch is not None and ctx > spec.arch.max_context_tokens:
            return ParsedQuery(
                error=ParseError(code="context_too_long", detail=str(spec.arch.max_context_tokens))
            )
        fields["seq_len" if fields["mode"].is_training else "context_tokens"] = ctx
    tokens, samples, epochs = (
        fields.pop("_tokens", None),
        fields.pop("_samples", None),
        fields.pop("_epochs", None),
    )
    if samples is not None:
        tokens = samples * (fields.get("seq_len") or 1024)
        out.assumed.append(f"{samples:g} samples x {fields.get('seq_len') or 1024} tokens")
    if tokens is not None or epochs is not None:
        if not fields["mode"].is_training:
            out.ignored.append("data/epochs (not training)")
        elif tokens is None:
            out.ignored.append("epochs without a data size")
        else:
            total = int(tokens * (epochs or 1))
            if not 1 <= total <= 10**15:
                return ParsedQuery(error=ParseError(code="bad_value", detail="train_tokens"))
            fields["train_tokens"] = total
    if out.gpu_count and out.gpu_count > 1:
        fields["num_gpus"] = out.gpu_count
    out.workload = Workload(**fields)
    return out


def _take_budget(s: _Scan) -> Budget | None:
    """¥5/h, 3元/小时, $2/h (per hour) or 预算 500元, budget $100 (the whole job)."""
    if (m := s.take(r"[¥￥]\s*(\d+(?:\.\d+)?)\s*(?:/|每|per\s*)\s*(?:hour|hr|h|小时|时)")) or (
        m := s.take(
            r"(\d+(?:\.\d+)?)\s*(?:元|块|rmb|cny)\s*(?:/|每|per\s*)\s*(?:hour|hr|h|小时|时)"
        )
    ):
        return Budget(amount=_number(m.group(1)), currency="CNY", per_hour=True)
    if m := s.take(r"\$\s*(\d+(?:\.\d+)?)\s*(?:/|per\s*)\s*(?:hour|hr|h)"):
        return Budget(amount=_number(m.group(1)), currency="USD", per_hour=True)
    if m := s.take(
        r"(?:预算|budget)\s*[:：]?\s*([¥￥$])?\s*(\d+(?:\.\d+)?)\s*(元|块|rmb|cny|usd|dollars?)?"
    ):
        usd = m.group(1) == "$" or (m.group(3) or "").startswith(("usd", "dollar"))
        return Budget(amount=_number(m.group(2)), currency="USD" if usd else "CNY", per_hour=False)
    return None


def parse_budget(text: str) -> Budget | None:
    """A budget alone ("¥10/h", "budget $100"), read as parse_query reads one."""
    return _take_budget(_Scan(_normalize(text).lower()))


def _find_model_span(s: _Scan) -> catalog.ModelSpec | None:
    words = [
        (m.start(), m.end()) for m in re.finditer(r"[a-z0-9][a-z0-9.\-_]*|[\u4e00-\u9fff]+", s.text)
    ]
    for size in (4, 3, 2, 1):
        for i in range(len(words) - size + 1):
            start, end = words[i][0], words[i + size - 1][1]
            candidate = s.text[start:end]
            spec = catalog.find_model(candidate)
            if spec is not None:
                s.understood.append(candidate.strip())
                s.text = s.text[:start] + " " * (end - start) + s.text[end:]
                return spec
    return None


def canonical_query(p: ParsedQuery) -> str:
    """The workload as one line the parser reads back to the same workload:
    `qwen2.5-7b · bf16 · inference · ctx 4096 · batch 1`."""
    w = p.workload
    if w is None:
        return ""
    parts: list[str] = [
        w.model or (f"{w.params_b:g}b" if w.params_b else (w.kind.value if w.kind else ""))
    ]
    if w.weights_format:
        parts.append(w.weights_format)
    parts.append(
        {
            "inference": "inference",
            "full": "full",
            "pretrain": "pretrain",
            "lora": "lora",
            "qlora": "qlora",
            "dora": "dora",
            "ia3": "ia3",
            "prompt_tuning": "prompt-tuning",
            "freeze": "full",
            "load_only": "inference",
        }[w.mode.value]
    )
    ctx = w.seq_len if w.mode.is_training else w.context_tokens
    if ctx:
        parts.append(f"ctx {ctx}")
    if w.batch_size:
        parts.append(f"batch {w.batch_size}")
    if w.image_width and w.image_height:
        parts.append(f"{w.image_width}x{w.image_height}")
    if w.images_per_prompt:
        parts.append(f"{w.images_per_prompt} images")
    if w.lora_rank:
        parts.append(f"rank {w.lora_rank}")
    if w.train_tokens:
        parts.append(f"data {w.train_tokens} tokens")
    if w.optimizer:
        parts.append(
            "adamw8bit"
            if w.optimizer == Optimizer.adamw_8bit
            else w.optimizer.value.replace("sgd_momentum", "sgd")
        )
    if w.gradient_checkpointing is not None:
        parts.append("gc" if w.gradient_checkpointing else "no-gc")
    if w.parallelism:
        parts.append(w.parallelism.value)
    if w.num_gpus > 1:
        parts.append(f"{w.num_gpus} gpus")
    if w.attention:
        parts.append(w.attention.value)
    if w.kv_cache_dtype:
        parts.append(f"kv {w.kv_cache_dtype}")
    if w.framework:
        parts.append(w.framework)
    if p.gpu_id:
        parts.append(f"on gpu:{p.gpu_id}")
    if p.budget:
        sym = "¥" if p.budget.currency == "CNY" else "$"
        parts.append(
            f"{sym}{p.budget.amount:g}/h"
            if p.budget.per_hour
            else f"budget {sym}{p.budget.amount:g}"
        )
    return " · ".join(x for x in parts if x)
