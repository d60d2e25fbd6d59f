"""A Wan model asked with no program named: the answer is for diffusers (said), and the
authors' generate.py with its README's flags is sized beside it (data/official_scripts.toml)."""

from __future__ import annotations

import tomllib

import pytest

from advisor.catalog import DATA_DIR
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from tests.conftest import plain_answer

Q11 = {
    "zh": "wan2.1 t2v 1.3b 生成480p 5秒视频 2080super 8g 能跑吗",
    "en": "wan2.1 t2v 1.3b 480p 5s video on an 8gb 2080 super, will it run?",
}
SAID = {
    "zh": "官方脚本（「generate.py --offload_model True --t5_cpu」）",
    "en": "own script (generate.py",
}


def test_the_script_entry_carries_its_source() -> None:
    raw = tomllib.loads((DATA_DIR / "official_scripts.toml").read_text())
    wan = next(s for s in raw["script"] if s["family"] == "wan")
    assert "8.19 GB" in wan["source"] and wan["read_date"] == "2026-12-07"
    assert wan["set"]["text_encoders_on_gpu"] is False and wan["set"]["vae_tiling"] is False


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_wan_answer_sizes_the_official_script_beside_diffusers(lang: str) -> None:
    rec = recommend_query(parse_query(Q11[lang]))
    note = next(p for p in rec.pitfalls if p.code.startswith("official_script"))
    # the untiled official decode needs more than the tiled diffusers recipe the answer is for
    assert float(note.params["gib"]) > rec.result.estimate.total_bytes / 2**30
    text = plain_answer(Q11[lang], lang)
    assert SAID[lang] in text and "diffusers" in text


def test_a_named_program_gets_no_note() -> None:
    rec = recommend_query(parse_query("wan2.1 t2v 1.3b 480p with diffusers on a 3090"))
    assert not any(p.code.startswith("official_script") for p in rec.pitfalls)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_skyreels_names_its_own_script_not_wans(lang: str) -> None:
    # SkyReels-V2 shares Wan's family; its README runs generate_video.py --offload, which
    # moves umT5 to the GPU to encode (no --t5_cpu) and keeps the VAE there
    raw = tomllib.loads((DATA_DIR / "official_scripts.toml").read_text())
    sky = next(s for s in raw["script"] if s.get("ids") == ["skyreels-v2"])
    assert "43.4 GB" in sky["source"] and sky["set"]["text_encoders_on_gpu"] is True
    text = plain_answer("skyreels-v2 14b 540p on a 4090", lang)
    assert "generate_video.py --offload" in text and "--t5_cpu" not in text
