"""The numbers that size a run: context, batch, LoRA rank, resolution, images per prompt,
training data and epochs, a dataset's input size, optimizer, checkpointing, attention; and
a bare parameter count ("7b", "70亿") once model names have had their turn."""

from __future__ import annotations

import re
from functools import cache

from advisor.audio_speed import default_batch
from advisor.memory import video
from advisor.memory.classic import family_defaults
from advisor.models import Attention, Optimizer
from advisor.parse import vocab
from advisor.parse.scan import SCALE, Reading, Scan, number, reject

MAX_PARAMS_B = 20_000  # ~20T: beyond anything trained; larger is a typo


# The words that the data, epoch and frame patterns cannot match without, tested first: the
# patterns' numbers are tried at every position, and most lines name none of these.
_DATA_WORDS = re.compile(r"sample|example|条|data|数据|语料|token|epoch|轮|\dep\b|\d\s+ep\b", re.I)
_EPOCH_WORD = re.compile(r"epoch|轮|\dep\b|\d\s+ep\b", re.I)
_FRAME_WORD = re.compile(r"帧|frame", re.I)


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


@cache
def _datasets() -> tuple[re.Pattern[str], dict[str, tuple[int, int]], dict[str, int]]:
    entries = vocab.load("datasets")["dataset"]
    sizes = {
        vocab.squash(n): (d["input_px"], d.get("input_height", d["input_px"]))
        for d in entries
        for n in d["names"]
    }
    classes = {
        vocab.squash(n): d["num_classes"] for d in entries if "num_classes" in d for n in d["names"]
    }
    return re.compile(vocab.alternation([n for d in entries for n in d["names"]])), sizes, classes


@cache
def _dataset_rows() -> dict[str, dict]:
    return {vocab.squash(n): d for d in vocab.load("datasets")["dataset"] for n in d["names"]}


def recognize_dataset(s: Scan, r: Reading) -> None:
    """cifar10 -> 32 px, imagenet -> 224, coco -> 640: the input size the dataset implies;
    a segmentation set also its classes (ade20k -> 150), which a segmentor's logits follow."""
    pattern, sizes, classes = _datasets()
    if m := s.take(pattern):
        row = _dataset_rows()[vocab.squash(m.group(0))]
        if "train_images" in row:  # "how long": the training split x epochs (_place_data)
            r.fields["_dataset_images"] = row["train_images"]
            r.fields["_usual_epochs"] = row.get("usual_epochs")
            r.fields["_usual_epochs_by_model"] = row.get("usual_epochs_by_model", {})
        width, height = sizes[vocab.squash(m.group(0))]
        own = family_defaults(r.spec).get("default_input")
        if row.get("trainer_default") and own and list(own) != [width, height]:
            return  # a trainer's size (YOLO's 640): the network's own configs' input wins
        r.fields.setdefault("image_width", width)
        r.fields.setdefault("image_height", height)
        if vocab.squash(m.group(0)) in classes:
            r.fields.setdefault("num_classes", classes[vocab.squash(m.group(0))])
        r.assumed.append(f"{_DATASET_SIZE}{m.group(0)} {width}x{height}")


_DATASET_SIZE = "dataset = "  # the assumption's prefix; an explicit size read later drops it


def _explicit_size(r: Reading, width: int, height: int) -> None:
    """A size the user wrote: it overrides a dataset's usual crop, and the answer must not
    still list that crop among its assumptions ("cityscapes 512x1024")."""
    r.fields["image_width"], r.fields["image_height"] = width, height
    r.assumed[:] = [a for a in r.assumed if not a.startswith(_DATASET_SIZE)]


# Knob patterns built from vocab words, compiled once (as Scan.take would, case-blind).
@cache
def _knob_patterns() -> dict[str, re.Pattern[str]]:
    words = vocab.knob_words
    return {
        name: re.compile(pattern, re.I)
        for name, pattern in {
            "context": rf"{words('context')}\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(k)?(?![a-z0-9])",
            "context_after": (
                rf"(?<![\d.])(\d+(?:\.\d+)?)\s*(k)?\s*(?:tokens?\s*)?{words('context_after')}"
            ),
            "prompt": (
                rf"{words('prompt')}\s*(?:长度|length|of|是|为)?\s*[:=：]?\s*"
                r"(\d+(?:\.\d+)?)\s*(k)?\s*(?:个\s*)?tokens?\b"
            ),
            "prompt_after": (
                rf"(?<![\d.])(\d+(?:\.\d+)?)\s*(k)?[\s-]*(?:tokens?[\s-]*(?:的)?\s*{words('prompt')}"
                rf"|{words('prompt')}\s*tokens?\b)"
            ),
            "batch": rf"{words('batch')}\s*[:=：]?\s*(\d+)",
            # "bs4", "bs16": the short form glued to its number (the word edge above needs a
            # gap after "bs")
            "batch_glued": r"(?<![a-z0-9])bs(\d+)(?![a-z0-9.])",
            "controlnets": rf"(?<![\d.])([1-8])\s*(?:x|个|×)?\s*{words('controlnet')}",
            "controlnet": rf"{words('controlnet')}(?:\s*(?:x|×)\s*([1-8])\b)?",
            # every diffusion knob's words in one pattern: it finds nothing exactly when no
            # knob pattern below can match, so most lines cost one scan, not five
            "diffusion": vocab.alternation(
                [
                    w
                    for knob in (
                        "vae_tiling",
                        "vae_slicing",
                        "vae_per_frame",
                        "split_mode",
                        "text_encoders_cpu",
                        "prompt_upsampler_off",
                        "latents_cached",
                        "controlnet",
                    )
                    for w in vocab.load("words")["knobs"][knob]
                ]
            ),
            "objects_per_image": (
                rf"{words('objects_per_image_before')}\s*(\d+)\s*{words('objects_per_image_noun')}"
            ),
            "objects_per_image_after": (
                r"(?:(?:max(?:imum)?|up\s+to|at\s+most)\s*)?(?<![\d.])(\d+)\s*"
                rf"{words('objects_per_image_noun')}\s*{words('objects_per_image_after')}"
            ),
            "gpu_memory_utilization": (
                rf"(?:--)?{words('gpu_memory_utilization')}\s*[:=：]?\s*(\d+(?:\.\d+)?)\s*(%)?"
            ),
        }.items()
    }


def recognize_prompt_length(s: Scan, r: Reading) -> None:
    """ "输入30k token", "a 30k token prompt", "30k input tokens": the prompt's length, taken
    as the context asked (before recognize_data, which reads "30k tokens" as data)."""
    if "_ctx" in r.fields:
        return
    p = _knob_patterns()
    if (m := s.take(p["prompt"])) or (m := s.take(p["prompt_after"])):
        r.fields["_ctx"] = int(number(m.group(1)) * (1024 if m.group(2) else 1))


# "平均上下文8k", "average context 8k", "8k context on average": the context is the
# average request's, said right before or after it
_AVERAGE_BEFORE = re.compile(r"(?:平均(?:的)?|average|avg\.?|mean|typical)\s*$", re.I)
_AVERAGE_AFTER = re.compile(r"^\s*(?:on\s+average|平均)", re.I)


def recognize_context(s: Scan, r: Reading) -> None:
    p = _knob_patterns()
    if (m := s.take(p["context"])) or (m := s.take(p["context_after"])):
        r.fields["_ctx"] = int(number(m.group(1)) * (1024 if m.group(2) else 1))
        before = _AVERAGE_BEFORE.search(s.text[max(0, m.start() - 12) : m.start()])
        after = _AVERAGE_AFTER.search(s.text[m.end() : m.end() + 16])
        if before or after:
            r.fields["context_average"] = True
            start = m.start() - 12 if m.start() >= 12 else 0
            word = (start + before.start(), start + before.end()) if before else None
            if after:
                word = (m.end() + after.start(), m.end() + after.end())
            if word is not None:
                s.take(re.escape(s.text[word[0] : word[1]].strip()))


# "batch" / "batched" / "批量" with no number after it ("batch_size 8" has one)
_BATCH_ALONE = re.compile(
    r"(?<![a-z0-9])(?:batched|batch)(?![\s_-]*(?:size)?\s*[:=：]?\s*\d)(?![a-z0-9_])"
    r"|批量(?!\s*\d)|批处理",
    re.I,
)


def recognize_batch(s: Scan, r: Reading) -> None:
    """A batch with its number first ("batch_size 8 批量转录" is batch 8); a speech model's
    "batch" / "批量" alone is batched transcription at the examples' batch, said so."""
    p = _knob_patterns()
    if (m := s.take(p["batch"])) or (m := s.take(p["batch_glued"])):
        r.fields["batch_size"] = int(m.group(1))
        if not 1 <= r.fields["batch_size"] <= 65_536:
            raise reject("bad_value", "batch_size")
        s.take(_BATCH_ALONE)  # "批量转录": the batched mode the number already sets
        return
    speech = r.spec is not None and r.spec.family == "whisper"
    if speech and "batch_size" not in r.fields and s.take(_BATCH_ALONE):
        # "whisper large-v3 T4 batch": batched transcription at the batch the faster-whisper
        # and transformers examples pass (data/audio_speed.toml), said so
        r.fields["batch_size"] = default_batch()
        r.assumed.append(f"speech_batch = {default_batch()}")


def recognize_classes(s: Scan, r: Reading) -> None:
    """`150 classes`, `19类`: the classes a segmentor predicts (its logits follow them)."""
    if m := s.take(r"(\d{1,6})\s*(?:classes|class|个?类(?:别)?)(?![a-z])"):
        r.fields["num_classes"] = int(m.group(1))
        if not 1 <= r.fields["num_classes"] <= 100_000:
            raise reject("bad_value", "num_classes")


def recognize_lora_rank(s: Scan, r: Reading) -> None:
    if m := s.take(r"(?:\b|(?<=_))(?:r|rank)\s*[:=]?\s*(\d{1,4})\b"):  # r=16, r 64, lora_r 8
        r.fields["lora_rank"] = int(m.group(1))


def recognize_resolution(s: Scan, r: Reading) -> None:
    if m := s.take(r"(?<![\d.])(\d{2,5})\s*[x*]\s*(\d{2,5})(?![\d.])"):
        _explicit_size(r, int(m.group(1)), int(m.group(2)))
    elif m := s.take(
        r"(?<![\d.])(240|360|480|540|576|720|1080|1440|2160)\s*p\b(?!x)"
        if r.spec is None or r.spec.diffusion is None
        else r"(?<![\d.])(\d{3,4})\s*p\b(?!x)"
    ):
        # "720p", "1080p", "480p" (other numbers only beside an image model: "310p" next to
        # an LLM is a card, Ascend 310P): a 16:9 frame that many lines high (the video convention:
        # 720p = 1280x720), width rounded to the 16-pixel multiple latent models use.
        # A still-image model's "1024p" is its square side.
        height = int(m.group(1))
        still = r.spec is not None and video.geometry(r.spec.id) is None
        _explicit_size(r, height if still else round(height * 16 / 9 / 16) * 16, height)
    elif m := s.take(r"(\d{2,5})\s*(?:px|分辨率)"):
        _explicit_size(r, int(m.group(1)), int(m.group(1)))
    elif m := s.take(r"\b(?:imgsz|img_size|img-size|image_size)\s*[:=]?\s*(\d{2,5})(?![\d.])"):
        # Ultralytics' / YOLOv5's imgsz (--img-size): the square side training letterboxes to
        _explicit_size(r, int(m.group(1)), int(m.group(1)))


def recognize_diffusion_knobs(s: Scan, r: Reading) -> None:
    """diffusers' VAE slicing / tiling and text encoders kept off the GPU."""
    if not _knob_patterns()["diffusion"].search(s.text):
        return
    if s.take(vocab.knob_words("vae_tiling")):
        r.fields["vae_tiling"] = True
    if s.take(vocab.knob_words("vae_slicing")):
        r.fields["vae_slicing"] = True
    if s.take(vocab.knob_words("vae_per_frame")):
        r.fields["vae_per_frame"] = True
    if s.take(vocab.knob_words("split_mode")):
        r.fields["split_mode"] = True
    if s.take(vocab.knob_words("text_encoders_cpu")):
        r.fields["text_encoders_on_gpu"] = False
    if s.take(vocab.knob_words("prompt_upsampler_off")):
        r.fields["prompt_upsampler_off"] = True
    if s.take(vocab.knob_words("latents_cached")):
        r.fields["latents_cached"] = True
    if m := s.take(_knob_patterns()["controlnets"]):
        r.fields["controlnets"] = int(m.group(1))
    elif s.take(_knob_patterns()["controlnet"]):
        r.fields["controlnets"] = 1


# The count and its word, which every images-per-prompt phrase holds: a cheap test first, as
# the phrase's leading "\s*" is tried from every blank a consumed span left (most lines have
# no image count, so the full pattern then never runs).
_IMAGE_COUNT = re.compile(r"(?<![a-z\d])\d+\s*(?:张|images?|imgs?|pics?|photos?)", re.I)


def recognize_images(s: Scan, r: Reading) -> None:
    if _IMAGE_COUNT.search(s.text) and (
        m := s.take(
            r"(?:多图|多张图片?|multi[- ]?image)?\s*(?<![a-z\d])(\d+)\s*"
            r"(?:张(?:图|图片)?|images?|imgs?|pics?|photos?)\b"
        )
    ):
        r.fields["images_per_prompt"] = int(m.group(1))


def recognize_frames(s: Scan, r: Reading) -> None:
    """A video's frame count: "81帧", "81 frames", "frames=129" (Wan's --frame_num, diffusers'
    num_frames); "one frame", "single-frame", "单帧" (a video model trained on images: the
    trainers take each image as a one-frame video) is 1."""
    if not _FRAME_WORD.search(s.text):
        return
    if s.take(r"\b(?:one|a single|single)[ -]frames?\b|单帧"):
        r.fields["video_frames"] = 1
        return
    if m := s.take(
        r"(?<![\d.])(\d{1,4})\s*(?:帧|frames?\b)|\b(?:num_frames|frame_num|frames)\s*[:=]\s*(\d{1,4})\b"
    ):
        frames = int(m.group(1) or m.group(2))
        if not 1 <= frames <= 10_000:
            raise reject("bad_value", "video_frames")
        r.fields["video_frames"] = frames


# A clip's length: "6秒视频", "一段6秒的视频", "a 5-second video", "10s clip" (the video word
# itself is left for the other recognizers)
_CLIP_SECONDS = re.compile(
    r"(?:一?段\s*)?(?<![\d.])(\d{1,3}(?:\.\d)?)[\s-]*(?:秒钟?|s|secs?|seconds?)(?:-long)?"
    r"(?:\s*(?:的|long))?(?=\s*(?:视频|短片|片段|videos?\b|clips?\b))"
)


def recognize_clip_seconds(s: Scan, r: Reading) -> None:
    """A video's length in seconds, with no frame count named: frames at the model's frame
    rate (advisor/video_speed.py clip_frames), said as an assumption; left unread for a
    model whose frame rate is not listed."""
    from advisor.video_speed import clip_frames

    if "video_frames" in r.fields or r.spec is None:
        return
    spec_id = r.spec.id
    m, length = s.take_if(_CLIP_SECONDS, lambda m: clip_frames(spec_id, float(m.group(1))))
    if m is None or length is None:
        return
    r.fields["video_frames"] = length.frames
    if length.capped:
        r.assumed.append(f"clip_capped = {m.group(1)} s → {length.seconds:g} s")
    said = f"{length.seconds:g} s × {length.fps} fps + 1 = {length.frames}"
    r.assumed.append(f"clip_seconds = {said}")


# The text encoders' own format, where it is named apart from the denoiser's: kohya's
# HunyuanVideo fork --fp8-llm (the LLM cast to float8_e4m3fn, its token embedding kept in
# bf16: generate_video_optimized.py prepare_fp8), "fp8 text encoder", "文本编码器 fp8".
_TEXT_ENCODER_FP8 = re.compile(
    r"--fp8[-_]llm\b|\bfp8[-_]llm\b|\bfp8\s+text[\s_-]?encoders?\b"
    r"|\btext[\s_-]?encoders?\s+(?:in\s+)?fp8\b|文本编码器\s*(?:用\s*)?fp8|fp8\s*(?:的)?文本编码器",
    re.I,
)


def recognize_text_encoder_format(s: Scan, r: Reading) -> None:
    """The text encoders in fp8 while the denoiser keeps the format named elsewhere."""
    if "fp8" in s.text.lower() and s.take(_TEXT_ENCODER_FP8):
        r.fields["text_encoder_format"] = "fp8"


# block swap named without a count
BARE_BLOCK_SWAP = r"(?:--)?blocks?[_ -]to[_ -]swap\b|\bblock[_ -]?swap(?:ping)?\b|块交换"


def recognize_block_swap(s: Scan, r: Reading) -> None:
    """kohya sd-scripts / musubi-tuner's block swap: "--blocks_to_swap 18", "blocks_to_swap=18",
    "block swap 18", "swap 18 blocks", and the dashed spelling of kohya's HunyuanVideo fork
    ("--blocks-to-swap 20")."""
    if "swap" not in s.text and "块交换" not in s.text:
        return
    if m := s.take(
        r"(?:--)?blocks?[_ -]to[_ -]swap\s*[:=：]?\s*(\d{1,3})\b|block[_ -]?swap\s*[:=：]?\s*(\d{1,3})\b"
        r"|swap\s+(\d{1,3})\s*blocks?\b"
    ):
        r.fields["blocks_to_swap"] = int(m.group(1) or m.group(2) or m.group(3))
        return
    # Asked without a count ("block swap", "--blocks-to-swap", "块交换"): the most the
    # script allows for this model, said in the answer (fewer blocks swapped hold more).
    d = r.spec.diffusion if r.spec is not None else None
    if d is not None and d.most_swapped and s.take(BARE_BLOCK_SWAP):
        r.fields["blocks_to_swap"] = d.most_swapped
        r.assumed.append(f"block_swap_most = {d.most_swapped}")


# A word each training-knob pattern below holds: most lines have none, and then one scan
# replaces four (whose leading \b re tries at every position).
_TRAINING_KNOB_WORDS = re.compile(
    r"adam|sgd|adafactor|lion|gc|梯度检查点|checkpointing|flash|sdpa|eager|xformers", re.I
)


def recognize_training_knobs(s: Scan, r: Reading) -> None:
    """Optimizer, gradient checkpointing, attention kernel."""
    if not _TRAINING_KNOB_WORDS.search(s.text):
        return
    if m := s.take(r"\b(adamw|adam|sgd|adafactor|lion)\b"):
        word = {"adam": "adamw", "sgd": "sgd_momentum"}.get(m.group(1), m.group(1))
        r.fields.setdefault("optimizer", Optimizer(word))
    if s.take(r"no[- ]?gc|不用梯度检查点|关闭梯度检查点"):
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


def recognize_size(s: Scan, r: Reading) -> None:
    """A bare parameter count (after model names: "qwen2.5-7b" is a name, "7b" a size)."""
    params_b: float | None = None
    if m := s.take(
        # a range of sizes ("7b-13b", "7b到14b", "7 to 13b"): sized for the larger, since
        # the smaller would leave the user short on the models they named
        r"(?<![a-z0-9.\-])(\d+(?:\.\d+)?)\s*b?\s*(?:-|~|～|到|至|to)\s*(\d+(?:\.\d+)?)\s*b\b"
    ):
        low, high = number(m.group(1)), number(m.group(2))
        if high > low:
            params_b = high
            r.assumed.append(f"size_range = {low:g}-{high:g}")
    if params_b is None and (
        m := s.take(r"(?<![\d.])(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*x\s*(\d+(?:\.\d+)?)\s*b\b")
    ):
        params_b = number(m.group(1)) * number(m.group(2))
    elif params_b is None and (
        m := s.take(
            # not the tail of a name ("lama3-8b" is a misspelt model, not an 8B one)
            r"(?<![a-z0-9.])(?<![a-z0-9.]-)(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*"
            r"(billion|bn|b|million|m|千亿|万亿|亿)(?![a-z])"
        )
    ):
        value, unit = number(m.group(1)), m.group(2)
        scale = {"m": 1e-3, "million": 1e-3, "亿": 0.1, "千亿": 100, "万亿": 1000}.get(unit, 1.0)
        params_b = value * scale
    if params_b is None and (
        m := s.take(
            r"(?<![\d.])10\s*(?:\^|\*\*)\s*(\d{1,4})\s*(?:个)?\s*(?:参数|params?|parameters)?"
        )
    ):
        exponent = int(m.group(1))
        if exponent > 15:  # beyond 10^15 parameters: no model is that size
            raise reject("bad_value", "params_b")
        params_b = 10.0**exponent / 1e9
    if params_b is None:
        return
    if params_b < 0 and m is not None and s.joined_before(m.start()):
        params_b = -params_b  # "foo-chat-7b" after "chat" was read: a hyphen, not a minus
    if 0 < params_b < 1e6:
        params_b = float(f"{params_b:.6g}")
    if not 0 < params_b <= MAX_PARAMS_B:
        raise reject("bad_value", "params_b")
    r.params_b = params_b


# Sequence lengths written as a bare number (powers of two, 256 to 128k tokens).
BARE_LENGTHS = frozenset(2**k for k in range(8, 18))


def _bare_length(m: re.Match[str]) -> int | None:
    n = int(m.group(1))
    return n if n in BARE_LENGTHS else None


def recognize_bare_context(s: Scan, r: Reading) -> None:
    """ "128k" alone is a context; a bare 3-4 digit number next to an image model a resolution."""
    if "_ctx" not in r.fields and (m := s.take(r"\b(\d+(?:\.\d+)?)\s*k\b")):
        r.fields["_ctx"] = int(number(m.group(1)) * 1024)
    language = r.spec is not None and r.spec.kind.value == "llm"
    if language and "_ctx" not in r.fields:
        # "lora qwen2-7b bs4 2048 24g": a bare power of two on a language-model line is the
        # sequence length people write (256 … 128k); said as read, so a wrong reading shows
        m, n = s.take_if(r"(?<![\d.])(\d{3,6})(?![\d.])", _bare_length)
        if m is not None:
            r.fields["_ctx"] = n
            r.assumed.append(f"bare_length = {n}")
    if (
        r.spec is not None
        and r.spec.kind.value == "diffusion"
        and "image_width" not in r.fields
        and (m := s.take(r"\b(\d{3,4})\b"))
    ):
        r.fields["image_width"] = r.fields["image_height"] = int(m.group(1))


def recognize_gpu_memory_utilization(s: Scan, r: Reading) -> None:
    """vLLM's --gpu-memory-utilization (SGLang's --mem-fraction-static): a share of the card,
    0.9 or 90%."""
    if m := s.take(_knob_patterns()["gpu_memory_utilization"]):
        value = float(m.group(1)) / (100 if m.group(2) or float(m.group(1)) > 1 else 1)
        if not 0 < value <= 1:
            raise reject("bad_value", "gpu_memory_utilization")
        r.fields["gpu_memory_utilization"] = value


def recognize_multiscale_crop(s: Scan, r: Reading) -> None:
    """mmdet's multi-scale crop recipe ("ms-crop", "multi-scale crop", "多尺度裁剪"): a
    detection batch pads to a larger canvas (advisor/memory/classic.py)."""
    if s.take(vocab.knob_words("multiscale_crop")):
        r.fields["multiscale_crop"] = True


def recognize_objects_per_image(s: Scan, r: Reading) -> None:
    """The most objects one training image holds ("每张图最多200个框", "max 50 objects per
    image"): a detector's label assigner pads the batch's targets to it."""
    p = _knob_patterns()
    if (m := s.take(p["objects_per_image"])) or (m := s.take(p["objects_per_image_after"])):
        value = int(m.group(1))
        if not 1 <= value <= 100_000:
            raise reject("bad_value", "objects_per_image")
        r.fields["objects_per_image"] = value


def recognize_static_cache(s: Scan, r: Reading) -> None:
    """transformers' static cache ("static cache", "cache_implementation=static", "静态缓存"):
    preallocated for the whole context before the prefill."""
    if s.take(vocab.knob_words("static_cache")):
        r.fields["static_cache"] = True
