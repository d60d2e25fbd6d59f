"""One pitfall built from its code: its severity and wording in both languages live in
data/pitfalls.toml, so each family's module gives only the code and its parameters; and the
GiB figure those parameters show."""

from __future__ import annotations

from advisor.types import Pitfall, pitfall_texts

GIB = 2**30


def pitfall(
    code: str, lang_params: dict[str, dict[str, str]] | None = None, **params: object
) -> Pitfall:
    # Built from values of the field types (str codes and severities, params as text), so
    # without validation (an answer raises ~5).
    severity = pitfall_texts()[code]["severity"]
    texts = {k: str(v) for k, v in params.items()}
    if lang_params is None:
        return Pitfall.model_construct(code=code, severity=severity, params=texts)
    return Pitfall.model_construct(
        code=code, severity=severity, params=texts, lang_params=lang_params
    )


def gib_text(b: float) -> str:
    return f"{b / GIB:.1f} GiB"
