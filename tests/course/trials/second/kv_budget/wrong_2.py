"""Misconception: a budget cannot be negative, so it is clamped at 0 when the weights do not fit.
Wrong where the weights exceed utilization x memory, e.g. OPT-13B in fp32 on a 40 GB A100: 0.0, not about -15.4e9.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    usable = utilization * hw.memory
    weights = shape.params * bytes_per_value
    return max(0.0, usable - weights)      # no memory left is no memory, not "minus" memory
