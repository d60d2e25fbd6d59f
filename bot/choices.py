"""The choices buttons offer, as data (`wizard.toml`): the guided conversation's tasks and
steps, and the precision / card / budget menus under an answer."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

WIZARD_FILE = Path(__file__).with_name("wizard.toml")


@cache
def wizard_spec() -> dict:
    with WIZARD_FILE.open("rb") as fh:
        return tomllib.load(fh)


def answer_choices(what: str) -> list[str]:
    """The precision / card / budget choices offered under an answer."""
    return wizard_spec()["answer"][{"f": "precisions", "g": "cards", "m": "budgets"}[what]]
