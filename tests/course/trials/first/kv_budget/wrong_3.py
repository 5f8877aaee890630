"""Misconception: a budget can't be negative, so it is clamped at 0. Same whenever the
weights fit; for a model larger than utilization x memory (OPT-13B in fp32, 51 GB, on an
A100 40 GB) it returns 0.0 instead of the negative 36 - 51 = -15.4 GB that says it does not fit."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    return max(0.0, utilization * hw.memory - shape.params * bytes_per_value)
