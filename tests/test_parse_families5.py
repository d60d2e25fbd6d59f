"""Families of spellings read from the fourth held-out table (tests/data/parse_lines_real4.toml)
and the third (parse_lines_real3.toml): each fix is a family, pinned here with spellings that
are in no table, and with the neighbours it must leave alone."""

import pytest

from advisor.parse import parse_query


def _read(text: str):
    p = parse_query(text)
    assert p.ok, (text, p.error)
    return p


# --- a size said of a run or of the model is not the card's memory ------------------------


@pytest.mark.parametrize(
    "text",
    [
        "qwen2.5-7b 显存占用高达 30G",
        "部署qwen2.5-14b 显存占到20G",
        "qwen2.5 7b 推理显存占用达到 18g",
    ],
)
def test_a_measurement_with_a_degree_word_is_not_the_card(text):
    assert _read(text).vram_gib is None


@pytest.mark.parametrize(
    "text",
    ["Why does llama 3 8b require 16GB of VRAM?", "sdxl requires 12gb vram", "flux dev needs 24GB"],
)
def test_what_the_model_requires_is_not_the_card(text):
    assert _read(text).vram_gib is None


@pytest.mark.parametrize(
    ("text", "gib"),
    [("I have 12GB VRAM, can I run sdxl", 12), ("我有一张显存高达 24G 的卡, 跑 qwen2.5 14b", 24)],
)
def test_memory_the_user_has_is_still_the_card(text, gib):
    assert _read(text).vram_gib == gib


# --- counts -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "card", "count"),
    [
        ("is 8 H100 enough for deepseek-v3", "h100-sxm", 8),
        ("4 A100 80G for llama 3 70b", "a100-80gb-sxm", 4),
        ("two RXT 3090 for qwen2.5 32b", "rtx-3090", 2),
        ("one rxt4090 for qwen2.5 14b", "rtx-4090", 1),
    ],
)
def test_a_count_before_a_data_center_card_or_a_misspelt_brand(text, card, count):
    p = _read(text)
    assert (p.gpu_id, p.gpu_count) == (card, count)


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("llama 3 A100 80G", None),
        ("gemma 3 H100", None),
        ("sd 3 a100", "sd3-medium"),
        ("batch size 8 A100 llama 3 8b", "llama-3-8b"),
    ],
)
def test_a_number_that_belongs_to_the_word_before_is_no_count(text, model):
    p = _read(text)
    assert p.gpu_count is None
    if model:
        assert p.workload.model == model


def test_a_count_after_a_model_size_is_still_a_count():
    assert _read("yi 34b 2 a100").gpu_count == 2


def test_a_consumer_card_number_after_a_number_is_not_counted():
    # "llama 3 4090": the 3 is Llama's version, not three cards
    p = _read("llama 3 8b on 4090")
    assert (p.gpu_id, p.gpu_count) == ("rtx-4090", None)


def test_a_bare_count_after_the_cards_does_not_replace_their_count():
    p = _read("qwen2.5 14b on two 3090s, OOM with one GPU")
    assert (p.gpu_id, p.gpu_count) == ("rtx-3090", 2)


def test_a_bare_count_written_before_the_card_is_still_read_first():
    p = _read("qwen2.5 14b 两卡或者三卡3090")
    assert (p.gpu_id, p.gpu_count) == ("rtx-3090", 2)


@pytest.mark.parametrize(
    ("text", "count", "gib"),
    [
        ("2x24GB GPUs qwen2.5 32b", 2, 24),
        ("qwen2.5 72b 4*48G的卡", 4, 48),
        ("没有8*80G, 只有4*24G 跑 qwen2.5 72b", 4, 24),
    ],
)
def test_so_many_cards_of_that_memory(text, count, gib):
    p = _read(text)
    assert (p.gpu_id, p.gpu_count, p.vram_gib) == (None, count, gib)


def test_so_many_sticks_of_host_memory_are_not_cards():
    p = _read("2*16G内存 跑 qwen2.5 7b")
    assert (p.gpu_count, p.vram_gib) == (None, None)


# --- what is done -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["finetunning qwen2.5 7b", "fintune llama 3 8b", "fine-tunning qwen2.5 7b on a 4090"]
)
def test_misspelt_fine_tune_is_a_fine_tune(text):
    assert _read(text).workload.mode.value == "lora"


@pytest.mark.parametrize(
    "text",
    [
        "full sft of llama 3 8b w/o lora",
        "qwen2.5 7b 微调 不用lora",
        "finetune qwen2.5 7b without peft",
    ],
)
def test_a_fine_tune_without_an_adapter_is_full(text):
    assert _read(text).workload.mode.value == "full"


def test_no_adapter_without_a_training_word_is_no_fine_tune():
    assert _read("qwen2.5 7b inference, no lora").workload.mode.value == "inference"


def test_lora_itself_is_still_lora():
    assert _read("qwen2.5 7b lora").workload.mode.value == "lora"


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "model"),
    [("mixtral 8x22 q4", "mixtral-8x22b"), ("Mixtral-8x7 instruct on 2x3090", "mixtral-8x7b")],
)
def test_a_mixture_written_without_its_b(text, model):
    assert _read(text).workload.model == model


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("falcon-40b on 2 A100", 40),
        ("Chat-UniVi-13B 需要多少显存", 13),
        ("qwen2-1.5b 微调", 1.5),
        ("chatglm2-6b 显存", 6),
    ],
)
def test_an_older_release_the_catalog_lacks_is_its_size_with_the_name_kept(text, size):
    p = _read(text)
    assert p.workload.params_b == size
    assert p.unrecognized is not None and p.unrecognized.code == "unknown_model"


def test_qwen2_vl_is_a_catalog_model_now():
    """Qwen2-VL 2B/7B/72B joined the catalog (data/models): no longer an unknown release."""
    p = _read("qwen2-vl-2b 推理")
    assert p.workload.model == "qwen2-vl-2b" and p.unrecognized is None


def test_a_size_an_outside_line_was_never_released_at_stays_did_you_mean():
    p = parse_query("qwen2-vl-13b 显存")
    assert not p.ok and p.error is not None and p.error.code == "unknown_model"


def test_an_outside_name_keeps_its_format_tail_for_the_format_recognizers():
    assert _read("qwen2-vl-72b-instruct-awq 4090").workload.weights_format == "awq-4bit"


# --- a hub page's address, "调" before a name, a card glued to its memory ----------------------


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("https://huggingface.co/Qwen/Qwen2.5-7B-Instruct 4090", "qwen2.5-7b"),
        ("hf-mirror.com/Qwen/Qwen2.5-14B-Instruct-AWQ 显存", "qwen2.5-14b"),
        ("https://www.modelscope.cn/models/Qwen/Qwen2.5-7B-Instruct 能跑吗 3090", "qwen2.5-7b"),
    ],
)
def test_a_hub_page_address_is_read_as_its_repo_id(text, model):
    assert _read(text).workload.model == model


def test_a_hub_page_of_a_repo_the_catalog_lacks_is_looked_up_on_the_hub():
    p = parse_query("https://huggingface.co/TheBloke/foo-coder-33B-instruct-AWQ on 2 A100")
    assert p.error is not None and p.error.code == "unknown_model" and "/" in p.error.detail


def test_another_address_is_not_a_repo_id():
    assert _read("see https://github.com/foo/bar qwen2.5 7b").workload.model == "qwen2.5-7b"


@pytest.mark.parametrize(
    "text", ["调Baichuan 13B需要多少显存", "想调qwen2.5 7b", "调 llama 3 8b 要几张卡"]
)
def test_tiao_alone_before_a_name_is_a_fine_tune(text):
    assert _read(text).workload.mode.value == "lora"


@pytest.mark.parametrize("text", ["调用qwen2.5 7b api", "强调qwen2.5 7b", "qwen2.5 7b 调参"])
def test_words_with_tiao_that_are_not_tuning_stay_inference(text):
    assert _read(text).workload.mode.value == "inference"


@pytest.mark.parametrize(
    ("text", "card", "count"),
    [
        ("deepseek-v3 on an A10080*8 machine", "a100-80gb-sxm", 8),
        ("h10080 x4 llama 3 70b", "h100-sxm", 4),
    ],
)
def test_a_card_glued_to_its_memory(text, card, count):
    p = _read(text)
    assert (p.gpu_id, p.gpu_count) == (card, count)


def test_a_glued_memory_the_card_was_never_sold_with_is_no_card():
    assert _read("a10090 qwen2.5 7b").gpu_id is None


def test_an_outside_name_held_by_the_catalog_at_that_size_is_the_catalog_model():
    assert _read("qwen2_7b 显存").workload.model == "qwen2-7b"
