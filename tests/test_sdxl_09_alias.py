"""SDXL 0.9, the research release SDXL 1.0 kept the architecture of
(stabilityai/stable-diffusion-xl-base-0.9 unet/config.json), is the catalog's SDXL: the
repository id and "sdxl0.9" were 'which model?' and a case naming it was sized as a generic
2.57B DiT."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from checks.cases import find_spec


@pytest.mark.parametrize(
    "question",
    ["stabilityai/stable-diffusion-xl-base-0.9 inference 3060", "sdxl0.9 推理 3060"],
)
def test_sdxl_0_9_is_read_as_sdxl(question: str) -> None:
    w = parse_query(question).workload
    assert w is not None and w.model == "sdxl"


def test_a_case_naming_sdxl_0_9_finds_the_catalog_entry() -> None:
    spec = find_spec({"name": "stabilityai/stable-diffusion-xl-base-0.9", "family": "sdxl"})
    assert spec is not None and spec.id == "sdxl"
