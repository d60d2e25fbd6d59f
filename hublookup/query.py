"""A question naming a Hub repo -> the ParsedQuery the engine answers.

The parser knows the catalog only, so the repo id is read as what the Hub says about it:
the rest of the question (card, context, quant, mode) is parsed with the repo's size in the
repo id's place, then the workload is given the repo's name, exact parameter counts,
architecture and (unless the user named one) the checkpoint's own weight format.
"""

from __future__ import annotations

import re

from advisor.hubspec import HubModel
from advisor.parse import ParsedQuery, parse_query


def hub_query(text: str, repo_id: str, model: HubModel) -> ParsedQuery:
    spec = model.spec
    size = f"{spec.params_b:.6g}b"
    stand_in = re.sub(re.escape(repo_id), size, text, count=1, flags=re.I)
    parsed = parse_query(stand_in)
    if not parsed.ok or parsed.workload is None:
        return parsed
    w = parsed.workload
    update: dict[str, object] = {
        "model": spec.id,
        "params_b": spec.params_b,
        "active_params_b": spec.active_params_b,
        "arch": spec.arch,
    }
    if w.weights_format is None and spec.default_format:
        update["weights_format"] = spec.default_format
    workload = w.model_validate({**w.model_dump(), **update})
    understood = [spec.id if u == size else u for u in parsed.understood]
    return parsed.model_copy(update={"workload": workload, "understood": understood})
