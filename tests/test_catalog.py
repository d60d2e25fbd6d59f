"""Catalog lookups users reach through commands."""

from advisor import catalog


def test_gpus_by_vram_floor_include_24gb_cards_that_report_a_little_less():
    cards, floor = catalog.search_gpus("24g")
    ids = [g.id for g in cards]
    assert floor == 24 and "rtx-4090" in ids and "rtx-3090" in ids and "rtx-4080" not in ids
    assert [g.vram_gb for g in cards] == sorted(g.vram_gb for g in cards)


def test_gpus_by_name_or_alias():
    assert {g.id for g in catalog.search_gpus("a100")[0]} >= {"a100-80gb-sxm", "a100-40gb-pcie"}
    # both 3060s (the owned-cards file adds the 3060 Ti), smallest first
    assert [g.id for g in catalog.search_gpus("3060")[0]] == ["rtx-3060-ti", "rtx-3060-12gb"]
    assert catalog.search_gpus("zzz") == ([], None)
    assert len(catalog.search_gpus("")[0]) == len(catalog.gpus())
