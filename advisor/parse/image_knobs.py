"""The numbers and switches that size an image or video run: the input size (a dataset's usual
crop, or the resolution written), diffusers' pipeline switches and ControlNets, images per
prompt, a video's frames or clip length, the text encoders' own format and kohya's block swap.
Kept apart from the language-model knobs (advisor/parse/knobs.py) because a resolution and a
dataset's crop override each other, and their words are read only beside an image or video
model's."""

from __future__ import annotations

import re
from functools import cache

from advisor.memory import video
from advisor.memory.classic_inputs import family_defaults
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan, reject

# The word a frame count cannot match without, tested first: the pattern's number is tried
# at every position, and most lines name no frames.
# "88f" / "544px960px97f": the frame-count shorthand of video READMEs (HunyuanVideo's
# "720px1280px129f", Step-Video's "544px992px136f") and of the names people give their runs.
_FRAME_SHORT = r"(?:(?<![\w.])|(?<=px))(\d{2,4})f\b"
_FRAME_WORD = re.compile(r"帧|frame|" + _FRAME_SHORT, re.I)


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
        if "train_images" in row:  # "how long": the training split x epochs (place_data)
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
        _named_height(r, int(m.group(1)))
    elif m := s.take(r"(\d{2,5})\s*(?:px|分辨率)"):
        _explicit_size(r, int(m.group(1)), int(m.group(1)))
    elif m := s.take(r"\b(?:imgsz|img_size|img-size|image_size)\s*[:=]?\s*(\d{2,5})(?![\d.])"):
        # Ultralytics' / YOLOv5's imgsz (--img-size): the square side training letterboxes to
        _explicit_size(r, int(m.group(1)), int(m.group(1)))


def _named_height(r: Reading, height: int) -> None:
    """A frame named by its height: the family's own size at that height where its scripts
    name one (vocab/words.toml [video_named_sizes]: Wan's 480p is 832x480), else the
    model's own frame where it is that high (CogVideoX's 480p is its 720x480), else the 16:9
    frame, width rounded to 16 pixels; a still-image model's "1024p" is its square side."""
    g = video.geometry(r.spec.id) if r.spec is not None else None
    still = r.spec is not None and g is None
    own = vocab.load("words")["video_named_sizes"].get(r.spec.family if r.spec else "", {})
    if not still and str(height) in own:
        _explicit_size(r, *own[str(height)])
        return
    if g is not None and abs(g.height - height) < 16:
        # the model's own frame is that height: its frame (CogVideoX's 480p is 720x480)
        _explicit_size(r, g.width, g.height)
        return
    _explicit_size(r, height if still else round(height * 16 / 9 / 16) * 16, height)


# A resolution at the end of a video model's repo name (Wan-AI/Wan2.1-I2V-14B-480P,
# Skywork/SkyReels-V2-T2V-14B-720P-Diffusers): the checkpoint's own size.
_NAME_HEIGHT = re.compile(r"(?<![a-z\d.])(\d{3,4})p(?![a-z\d])", re.I)


def name_resolution(r: Reading, word: str) -> None:
    """The frame a video model's name carries ("wan2.1 i2v 14b 480p"), read as if typed; a
    height that is the model's own default changes nothing."""
    g = video.geometry(r.spec.id) if r.spec is not None else None
    m = _NAME_HEIGHT.search(word)
    if g is None or m is None or abs(int(m.group(1)) - g.height) < 16:
        return
    _named_height(r, int(m.group(1)))


# The diffusion knob patterns built from vocab words, compiled once (as Scan.take would,
# case-blind).
@cache
def _diffusion_patterns() -> dict[str, re.Pattern[str]]:
    words = vocab.knob_words
    return {
        name: re.compile(pattern, re.I)
        for name, pattern in {
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
        }.items()
    }


# Switches a diffusion question names: the word table's knob -> the Workload field it sets.
_DIFFUSION_SWITCHES = (
    ("vae_tiling", "vae_tiling", True),
    ("vae_slicing", "vae_slicing", True),
    ("vae_per_frame", "vae_per_frame", True),
    ("split_mode", "split_mode", True),
    ("text_encoders_cpu", "text_encoders_on_gpu", False),
    ("prompt_upsampler_off", "prompt_upsampler_off", True),
    ("latents_cached", "latents_cached", True),
)


def recognize_condition_cache(s: Scan, r: Reading) -> None:
    """A pipeline's own condition key/value cache kept on the GPU ("offload_kv_cache=False",
    "kv缓存不卸载": OmniGen v1's switch, data/models/image_dit.toml); read before the KV-cache
    and offload words, which would take its words."""
    if "kv" in s.text and s.take(vocab.knob_words("condition_cache_on_gpu")):
        r.fields["condition_cache_on_gpu"] = True


def recognize_diffusion_knobs(s: Scan, r: Reading) -> None:
    """diffusers' VAE slicing / tiling and text encoders kept off the GPU."""
    if not _diffusion_patterns()["diffusion"].search(s.text):
        return
    for knob, field, value in _DIFFUSION_SWITCHES:
        if s.take(vocab.knob_words(knob)):
            r.fields[field] = value
    if m := s.take(_diffusion_patterns()["controlnets"]):
        r.fields["controlnets"] = int(m.group(1))
    elif s.take(_diffusion_patterns()["controlnet"]):
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


def recognize_decode_chunk(s: Scan, r: Reading) -> None:
    """The frames a video pipeline decodes per VAE call: "decode_chunk_size=8", "decoding_t 1"
    (words.toml [knobs] decode_chunk), "decode 2 frames at a time", "每次解码2帧"; read before
    the video's own frame count, which these frames are not."""
    if "decod" not in s.text and "解码" not in s.text:
        return
    if m := s.take(
        rf"{vocab.knob_words('decode_chunk')}\s*(?::\s*int\s*)?[:=：]?\s*(\d{{1,4}})\b"
        r"|decod\w*\s+(\d{1,4})\s*frames?\s+(?:at\s+a\s+time|per\s+(?:call|chunk|batch))"
        r"|(?:每次|一次)\s*解码\s*(\d{1,4})\s*帧"
    ):
        chunk = int(m.group(1) or m.group(2) or m.group(3))
        if not 1 <= chunk <= 10_000:
            raise reject("bad_value", "decode_chunk_frames")
        r.fields["decode_chunk_frames"] = chunk


def recognize_frames(s: Scan, r: Reading) -> None:
    """A video's frame count: "81帧", "81 frames", "frames=129" (Wan's --frame_num, diffusers'
    num_frames), "129f"; "one frame", "single-frame", "单帧" (a video model trained on images: the
    trainers take each image as a one-frame video) is 1."""
    if not _FRAME_WORD.search(s.text):
        return
    if s.take(r"\b(?:one|a single|single)[ -]frames?\b|单帧"):
        r.fields["video_frames"] = 1
        return
    if m := s.take(
        r"(?<![\d.])(\d{1,4})\s*(?:帧|frames?\b)|\b(?:num_frames|frame_num|frames)\s*[:=]\s*(\d{1,4})\b|"
        + _FRAME_SHORT
    ):
        frames = int(m.group(1) or m.group(2) or m.group(3))
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
