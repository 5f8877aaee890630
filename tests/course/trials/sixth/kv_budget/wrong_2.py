"""Misconception: "memory cannot be negative", so the budget is clamped at 0. A model
whose weights exceed the share (Llama 3.1 8B in bf16 on a 10 GB GPU, or OPT-13B at
utilization 0.5 on an A100 40 GB) gets 0.0 instead of the contract's negative number.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    return max(0.0, utilization * hw.memory - shape.params * bytes_per_value)
