"""A model on the Hugging Face Hub, from what its repo publishes, as the engine's ModelSpec.

Pure: the caller (hublookup/, outside the engine) reads config.json, the safetensors
headers and the file listing; these functions only turn that data into numbers.
"""

from advisor.hubspec.arch import architecture
from advisor.hubspec.quant import QuantInfo, quant_info
from advisor.hubspec.spec import GgufFile, HubFacts, HubModel, gguf_format, hub_model
from advisor.hubspec.tensors import TensorCounts, count_tensors

__all__ = [
    "GgufFile",
    "HubFacts",
    "HubModel",
    "QuantInfo",
    "TensorCounts",
    "architecture",
    "count_tensors",
    "gguf_format",
    "hub_model",
    "quant_info",
]
