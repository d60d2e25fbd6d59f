"""The numbers and switches that size a training run beyond the model: its data (samples or
tokens) and epochs, a detection schedule's length, a segmentor's classes, the most objects an
image holds, mmdet's multi-scale crop, and the optimizer, gradient checkpointing and
attention kernel. Kept apart from the language-model knobs (advisor/parse/knobs.py) and the
image ones (advisor/parse/image_knobs.py): these words say how a run trains, whatever it
trains."""

from __future__ import annotations

import re
from functools import cache

from advisor.models.choices import Attention, Optimizer
from advisor.parse import vocab
from advisor.parse.scan import SCALE, Reading, Scan, number, reject

# The words that the data and epoch patterns cannot match without, tested first: the
# patterns' numbers are tried at every position, and most lines name none of these.
_DATA_WORDS = re.compile(r"sample|example|条|data|数据|语料|token|epoch|轮|\dep\b|\d\s+ep\b", re.I)
_EPOCH_WORD = re.compile(r"epoch|轮|\dep\b|\d\s+ep\b", re.I)


def recognize_data(s: Scan, r: Reading) -> None:
    """Training data in samples or tokens, and epochs (before sizes: "30m tokens" is data).
    Samples first: in "10w条数据 3 epochs" the 3 is epochs, not a data size."""
    if not _DATA_WORDS.search(s.text):
        return
    if m := s.take(r"\bdata\s+(\d+)\s+images\b"):  # the canonical line's image count
        r.fields["train_images"] = int(m.group(1))
    if m := s.take(
        r"(?<![\d.])(\d+(?:\.\d+)?)\s*(k|万|w)?\s*(?:samples?|examples?|条(?:数据|样本)?)"
    ):
        unit = {"w": "万"}.get(m.group(2) or "", m.group(2) or "")  # 10w条 = 10万条
        r.fields["_samples"] = number(m.group(1)) * SCALE[unit]
    elif m := s.take(
        r"(?:data(?:set)?|数据集?|语料)\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(k|m|b|万|亿)?\s*(?:tokens?)?"
        r"(?![\w.])(?!\s*(?:epochs?|轮))"
        r"|(?<![\d.])(\d+(?:\.\d+)?)\s*(k|m|b|万|亿)\s*tokens?\b"
    ):
        value, unit = number(m.group(1) or m.group(3)), (m.group(2) or m.group(4) or "")
        r.fields["_tokens"] = value * SCALE[unit]
    if _EPOCH_WORD.search(s.text) and (
        m := s.take(
            r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:epochs?\b|轮|个\s*(?:epochs?\b|轮)|ep\b)"
            r"|\bepochs?\s*[:=]?\s*(\d+)\b"
        )
    ):
        r.fields["_epochs"] = number(m.group(1) or m.group(2))


@cache
def _schedule_patterns() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, int]]:
    table = vocab.load("words")["schedules"]
    context = re.compile(vocab.alternation(table["context"]), re.I)
    word = re.compile(r"(?<![\w.])([123]x)(?![\w.])(?:\s*(?:schedule|训练|学习率))?", re.I)
    return context, word, table["epochs"]


def recognize_schedule(s: Scan, r: Reading) -> None:
    """A detection schedule named by its length ("mask rcnn r50 fpn 1x"): its epochs
    (data/vocab/words.toml [schedules]), read only beside a detection word. The cards are
    read before ("2x 3090" is two cards)."""
    context, word, epochs = _schedule_patterns()
    if "_epochs" in r.fields or not context.search(s.original or s.text):
        return
    if m := s.take(word):
        r.fields["_epochs"] = float(epochs[m.group(1).lower()])
        r.fields["_schedule"] = m.group(1).lower()


def recognize_classes(s: Scan, r: Reading) -> None:
    """`150 classes`, `19类`: the classes a segmentor predicts (its logits follow them)."""
    if m := s.take(r"(\d{1,6})\s*(?:classes|class|个?类(?:别)?)(?![a-z])"):
        r.fields["num_classes"] = int(m.group(1))
        if not 1 <= r.fields["num_classes"] <= 100_000:
            raise reject("bad_value", "num_classes")


# A word each training-knob pattern below holds: most lines have none, and then one scan
# replaces four (whose leading \b re tries at every position).
_TRAINING_KNOB_WORDS = re.compile(
    r"adam|sgd|adafactor|lion|prodigy|gc|梯度检查点|checkpointing|flash|sdpa|eager|xformers", re.I
)


def recognize_training_knobs(s: Scan, r: Reading) -> None:
    """Optimizer, gradient checkpointing, attention kernel."""
    if not _TRAINING_KNOB_WORDS.search(s.text):
        return
    if m := s.take(r"\b(adamw|adam|sgd|adafactor|lion|prodigy)\b"):
        word = {"adam": "adamw", "sgd": "sgd_momentum"}.get(m.group(1), m.group(1))
        r.fields.setdefault("optimizer", Optimizer(word))
    # said off: "no gc", "no / without gradient checkpointing", "gradient checkpointing off /
    # false", "不开 / 关掉 / 没开梯度检查点", "梯度检查点关"
    if s.take(
        r"no[- ]?gc\b|\b(?:no|without|disabled?)[ _-]+(?:gradient|activation)[ _-]?checkpointing"
        r"|(?:gradient|activation)[ _-]?checkpointing[ _=:]*(?:off|false|disabled)\b"
        r"|(?:不用|不使用|关闭|关掉|不开|没开|未开)梯度检查点|梯度检查点[：: ]*(?:关|否)"
    ):
        r.fields["gradient_checkpointing"] = False
    elif s.take(r"\bgc\b|梯度检查点|gradient[_ ]checkpointing|activation checkpointing"):
        r.fields["gradient_checkpointing"] = True
    # xformers' memory-efficient attention tiles the scores as FlashAttention does: flash.
    if m := s.take(
        r"\b(flash[- ]?attn\d?|flash[- ]?attention[- ]?\d?|flash|sdpa|eager|xformers)\b"
    ):
        word = m.group(1)
        tiled = "flash" in word or word == "xformers"
        r.fields["attention"] = Attention.flash if tiled else Attention(word)


def recognize_loss_knobs(s: Scan, r: Reading) -> None:
    """The loss a question names: a chunked cross-entropy, a standard one, torch.compile, a
    classification head in place of the LM head (data/vocab/words.toml [knobs]). Unsaid, the
    chunked loss is the stack's own default."""
    if s.take(vocab.knob_words("chunked_loss")):
        r.fields["chunked_loss"] = True
    elif s.take(vocab.knob_words("standard_loss")):
        r.fields["chunked_loss"] = False
    if s.take(vocab.knob_words("torch_compile")):
        r.fields["torch_compile"] = True
    if s.take(vocab.knob_words("classifier_head")):
        r.fields["classifier_head"] = True


# A LoRA's target modules as a question names them: every Linear ("all-linear", "所有线性层",
# LLaMA-Factory's "lora_target all"; data/vocab/words.toml [knobs] lora_all_linear) or the
# projections listed ("q_proj,v_proj", "target_modules q_proj k_proj v_proj o_proj"), the
# same strings the case adapter passes from a case's lora_targets (advisor/memory/
# transformer.py lora_target_dims reads both).
_PROJECTION = r"(?:q|k|v|o|gate|up|down)_proj"
_PROJECTIONS = re.compile(
    rf"(?:target_modules\s*[:=]?\s*)?\[?['\"]?\b{_PROJECTION}['\"]?"
    rf"(?:\s*[,/+]?\s*['\"]?{_PROJECTION}['\"]?)*\]?",
    re.I,
)


def recognize_lora_targets(s: Scan, r: Reading) -> None:
    if s.take(vocab.knob_words("lora_all_linear")):
        r.fields["lora_targets"] = "all-linear"
    elif m := s.take(_PROJECTIONS):
        names = re.findall(_PROJECTION, m.group(0).lower())
        r.fields["lora_targets"] = ",".join(dict.fromkeys(names))


def recognize_multiscale_crop(s: Scan, r: Reading) -> None:
    """mmdet's multi-scale crop recipe ("ms-crop", "multi-scale crop", "多尺度裁剪"): a
    detection batch pads to a larger canvas (advisor/memory/classic.py)."""
    if s.take(vocab.knob_words("multiscale_crop")):
        r.fields["multiscale_crop"] = True


# The objects-per-image patterns built from vocab words, compiled once (as Scan.take would,
# case-blind).
@cache
def _objects_patterns() -> dict[str, re.Pattern[str]]:
    words = vocab.knob_words
    return {
        name: re.compile(pattern, re.I)
        for name, pattern in {
            "objects_per_image": (
                rf"{words('objects_per_image_before')}\s*(\d+)\s*{words('objects_per_image_noun')}"
            ),
            "objects_per_image_after": (
                r"(?:(?:max(?:imum)?|up\s+to|at\s+most)\s*)?(?<![\d.])(\d+)\s*"
                rf"{words('objects_per_image_noun')}\s*{words('objects_per_image_after')}"
            ),
        }.items()
    }


def recognize_objects_per_image(s: Scan, r: Reading) -> None:
    """The most objects one training image holds ("每张图最多200个框", "max 50 objects per
    image"): a detector's label assigner pads the batch's targets to it."""
    p = _objects_patterns()
    if (m := s.take(p["objects_per_image"])) or (m := s.take(p["objects_per_image_after"])):
        value = int(m.group(1))
        if not 1 <= value <= 100_000:
            raise reject("bad_value", "objects_per_image")
        r.fields["objects_per_image"] = value


@cache
def _release_pattern() -> re.Pattern[str]:
    after = "|".join(
        f"(?<={re.escape(w)})" for w in vocab.load("words")["knobs"]["unsloth_version"]
    )
    return re.compile(rf"(?:{after})\s*(?:==|=|v)?\s*(20\d\d\.\d{{1,2}})(?:\.\d+)?(?![\d.])", re.I)


@cache
def _transformers_release_pattern() -> re.Pattern[str]:
    after = "|".join(
        f"(?<={re.escape(w)})" for w in vocab.load("words")["knobs"]["transformers_version"]
    )
    return re.compile(rf"(?:{after})\s*(?:==|=|v)?\s*([45]\.\d{{1,2}})(?:\.\d+)?(?![\d.])", re.I)


def recognize_stack_release(s: Scan, r: Reading) -> None:
    """Unsloth's release after its name ("unsloth 2024.1", "unsloth==2024.4.2") and
    transformers' ("transformers 4.45", "transformers==4.56.1"): only the number is taken,
    the name is left for the stack."""
    if m := s.take(_release_pattern()):
        r.fields["unsloth_version"] = m.group(1)
    if m := s.take(_transformers_release_pattern()):
        r.fields["transformers_version"] = m.group(1)
