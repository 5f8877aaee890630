"""Correct, written differently: counts what the engine may not use and the weights as two
deductions from the whole memory, memory - (1 - utilization) * memory - weights, rather
than utilization * memory - weights (equal up to float rounding)."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    weights = float(shape.params) * bytes_per_value
    kept_back = (1.0 - utilization) * hw.memory
    return hw.memory - kept_back - weights
