"""A ResNet trained at CIFAR's 32 px is the CIFAR variant (mmpretrain ResNet_CIFAR: a 3x3
stride-1 first conv, no max-pool), whose stages work at the full input size: the term
cifar_stem (data/classic_activations.toml [cifar_stem]) is pinned to the figures
calibration/cifar_stem_cpu.py measured (calibration/data/cifar_stem_cpu.json)."""

import json
import tomllib
from pathlib import Path

from advisor.catalog import DATA_DIR
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from tests.conftest import answers_both

MEASURED = Path(__file__).resolve().parents[1] / "calibration" / "data" / "cifar_stem_cpu.json"


def _term(w: Workload):
    r = estimate(w)
    terms = {t.name: t for t in r.estimate.terms}
    return terms.get("cifar_stem"), terms, r


def test_the_figures_are_the_measured_slopes():
    with (DATA_DIR / "classic_activations.toml").open("rb") as fh:
        table = tomllib.load(fh)["cifar_stem"]["bytes_per_sample"]
    measured = json.loads(MEASURED.read_text())["models"]
    for name, figure in table.items():
        assert figure == measured[name]["cifar_peak_bytes_per_sample"], name
        # the CIFAR variant keeps ten times and more the ImageNet variant's at 32 px
        assert measured[name]["saved_ratio"] > 10, name


def test_resnet18_at_32px_is_sized_as_the_cifar_variant_and_says_so():
    w = Workload(model="resnet18", mode="full", batch_size=256, image_width=32, image_height=32)
    term, terms, r = _term(w)
    assert term is not None
    # activations + the term = 256 samples x the CIFAR variant's 4,543,936 B
    total = terms["activations"].bytes + term.bytes
    assert abs(total - 256 * 4_543_936) <= 2
    assert {a.field: a.value for a in r.assumed}["resnet_stem"] == "cifar_resnet_stem"


def test_imagenet_sizes_and_other_families_keep_the_imagenet_figure():
    big = Workload(model="resnet50", mode="full", batch_size=32, image_width=224, image_height=224)
    assert _term(big)[0] is None
    other = Workload(model="efficientnet-b0", mode="full", batch_size=64, image_width=32)
    assert _term(other)[0] is None
    assert _term(Workload(model="resnet18", mode="inference", image_width=32))[0] is None


def test_a_question_naming_cifar_reaches_the_same_reading_in_both_languages():
    for line in ("train resnet18 on cifar10, batch 256", "用cifar10训练resnet18，batch 256"):
        w = parse_query(line).workload
        assert w is not None and w.image_width == 32, line
        assert _term(w)[0] is not None, line
    _, texts = answers_both("train resnet18 on cifar10, batch 256")
    assert "ResNet_CIFAR" in texts["en"]
    assert "「ResNet_CIFAR」" in texts["zh"]


def test_efficientnet_b7_is_catalogued_from_its_measured_saved_bytes():
    # calibration/activations_cpu.py efficientnet_b7: torchvision's B7, 224x224, batch 2
    cal = Path(__file__).resolve().parents[1] / "calibration" / "data" / "activations_cpu.json"
    record = json.loads(cal.read_text())["models"]["efficientnet_b7"]
    w = Workload(model="efficientnet-b7", mode="full", batch_size=4, image_width=224)
    r = estimate(w)
    assert r.model.id == "efficientnet-b7"
    activations = {t.name: t.bytes for t in r.estimate.terms}["activations"]
    per_sample = record["saved_bytes"] / record["batch"]
    assert abs(activations / 4 / per_sample - 1) < 0.01
    assert parse_query("train efficientnet-b7 on cifar10").workload.model == "efficientnet-b7"


def _swish(w: Workload):
    r = estimate(w)
    terms = {t.name: t for t in r.estimate.terms}
    return terms.get("mmcv_swish"), terms


def test_openmmlab_efficientnet_keeps_the_measured_swish_share():
    # calibration/mmcv_swish_cpu.py: torchvision's B7 with mmcv's Swish swapped in
    cal = Path(__file__).resolve().parents[1] / "calibration" / "data" / "mmcv_swish_cpu.json"
    ratio = json.loads(cal.read_text())["models"]["efficientnet_b7"]["saved_ratio"]
    w = Workload(
        model="efficientnet-b7", mode="full", batch_size=128, image_width=32, framework="mmpretrain"
    )
    term, terms = _swish(w)
    assert term is not None
    assert abs(term.bytes / terms["activations"].bytes - (ratio - 1)) < 1e-3
    torchvision_run = w.model_copy(update={"framework": None})
    assert _swish(torchvision_run)[0] is None
    inference = Workload(model="efficientnet-b7", mode="inference", framework="mmpretrain")
    assert _swish(inference)[0] is None


def test_mmcls_in_a_question_reaches_the_swish_line():
    for line in (
        "train efficientnet-b7 on cifar10 with mmcls, batch 128",
        "用mmpretrain训练efficientnet-b7",
    ):
        w = parse_query(line).workload
        assert w is not None and w.framework == "mmpretrain", line
        assert _swish(w)[0] is not None, line
