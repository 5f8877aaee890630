"""Misconception: the utilization share is taken of what the weights leave, not of the
whole memory: (memory - weights) x utilization. Wrong for any model, e.g. OPT-13B in bf16
on an A100 40 GB: 10.3 GB expected, about 11.6 GB returned.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    weights = shape.params * bytes_per_value
    return (hw.memory - weights) * utilization
