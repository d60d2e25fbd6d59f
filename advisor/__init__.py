"""The GPU advisor engine: deterministic, no Telegram, no database, no network.

Public API: `estimate`, `parse_query`, `recommend`, and the pydantic models.
"""

from advisor.memory import UnknownFormatError, UnknownModelError, estimate
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload

__all__ = ["EstimateResult", "UnknownFormatError", "UnknownModelError", "Workload", "estimate"]
