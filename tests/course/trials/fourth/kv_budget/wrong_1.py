"""Misconception: "utilization" is the share of what the weights leave, so it scales the
remainder: utilization * (memory - weights) instead of utilization * memory - weights.
h100-sxm, a 1e9-parameter shape in bf16: 70.2e9 instead of 70.0e9."""
from minicb.costmodel import Hardware, ModelShape


def kv_budget(hw: Hardware, shape: ModelShape, bytes_per_value: int,
              utilization: float = 0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    weights = shape.params * bytes_per_value
    return utilization * (hw.memory - weights)
