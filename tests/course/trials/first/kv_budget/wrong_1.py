"""Misconception: the weights are loaded first and utilization is the share of what they
leave for the cache: utilization * (memory - weights). For OPT-13B on an A100 40 GB in
bf16 that gives ~12.9 GB instead of ~10.3 GB (it agrees only at utilization=1.0)."""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    weights = shape.params * bytes_per_value
    return utilization * (hw.memory - weights)
