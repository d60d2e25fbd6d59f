"""A program the user names gets its own memory switches or trap in the answer
(data/pitfalls.toml [stack_levers]): DiffSynth-Studio's resident-parameter and fp8 switches
for Wan 14B, finetrainers' (cogvideox-factory's) validation pass that peaks above training."""

from __future__ import annotations

import tomllib

import pytest

from advisor.catalog import DATA_DIR
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from tests.conftest import plain_answer

DIFFSYNTH = {
    "zh": "wan2.1 i2v 14b 480p 用diffsynth 开offload 4090 24g能跑吗",
    "en": "wan2.1 i2v 14b 480p with diffsynth and offload on a 24gb 4090, will it run?",
}
FINETRAINERS = {
    "zh": "cogvideox-factory lora 训练 cogvideox-5b 单卡4090 够吗",
    "en": "cogvideox-factory lora training of cogvideox-5b on one 4090, enough?",
}


def _entries() -> list[dict]:
    return tomllib.loads((DATA_DIR / "pitfalls.toml").read_text())["stack_levers"]["entry"]


def test_every_entry_carries_its_source_and_date() -> None:
    for entry in _entries():
        assert "read 2026-12-08" in entry["source"] and entry["zh"] and entry["en"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_diffsynth_is_read_and_its_switches_named(lang: str) -> None:
    parsed = parse_query(DIFFSYNTH[lang])
    assert parsed.workload is not None and parsed.workload.framework == "diffsynth"
    assert "diffsynth" not in " ".join(parsed.ignored).lower()
    text = plain_answer(DIFFSYNTH[lang], lang)
    assert "num_persistent_param_in_dit" in text and "float8_e4m3fn" in text
    assert "10 GB" in text and "40 GB" in text  # the README's figures
    # the authors' script is not what the user runs: no note about it
    assert "generate.py" not in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_finetrainers_warns_of_its_validation_peak(lang: str) -> None:
    rec = recommend_query(parse_query(FINETRAINERS[lang]))
    note = next(p for p in rec.pitfalls if p.code == "stack_levers")
    assert note.severity == "warning"
    text = plain_answer(FINETRAINERS[lang], lang)
    assert "28.7–30.3 GB" in text and "--enable_model_cpu_offload" in text
    assert "--validation_dataset_file" in text


def test_no_lever_for_another_program_or_mode() -> None:
    for q in (
        "wan2.1 i2v 14b 480p with diffusers on a 4090",  # another program
        "wan2.1 t2v 1.3b with diffsynth on a 3060",  # a model the table is not for
        "cogvideox-5b inference with diffusers on a 4090",
    ):
        rec = recommend_query(parse_query(q))
        assert not any(p.code == "stack_levers" for p in rec.pitfalls), q


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_assumptions_say_the_figures_are_the_pipelines_not_the_programs(lang: str) -> None:
    # "runtime: diffusers" beside a DiffSynth question read as if it were assumed to be run
    # with diffusers: it is the sizing basis, said so with the program named
    text = plain_answer(DIFFSYNTH[lang], lang)
    said = {
        "zh": "按「diffusers」管线估算（你用的是「DiffSynth-Studio」",
        "en": "sized as the diffusers pipeline (DiffSynth-Studio is what you run",
    }[lang]
    assert said in text
    assert "运行框架：diffusers" not in text and "runtime: diffusers" not in text
