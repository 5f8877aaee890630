"""Misconception: utilization is applied to what the weights leave, not to the whole memory.
Wrong for any input with nonzero weights, e.g. 80e9 bytes, 1e9 params of 2 bytes: gives 70.2e9, not 70e9 (only utilization=1.0 agrees).
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    weights = shape.params * bytes_per_value
    # the weights must be loaded whatever happens; the engine then takes its share of the rest
    return float(utilization * (hw.memory - weights))
