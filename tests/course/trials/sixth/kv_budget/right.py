"""Right: names the two shares (what the engine may fill, what the weights take) and
returns the first less the second as a negated difference; no clamping, no rounding.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    may_fill = utilization * hw.memory
    weights = bytes_per_value * shape.params
    return -(weights - may_fill)
