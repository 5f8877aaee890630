"""Misconception: utilization is the share of what the weights leave, (memory - weights) x utilization.
A100 40 GB, OPT-13B in bf16 (25.7 GB): 12.9 GB where the contract gives 10.3 GB.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache."""
    weights = shape.params * bytes_per_value
    return (hw.memory - weights) * utilization
