"""Chapter 11: how much KV memory a GPU leaves.

An engine may use a share of the GPU's memory in all; the weights come first,
and the KV cache gets the rest.
Check: ``python -m minicb check kv_budget``.
"""


def kv_budget(hw, shape, bytes_per_value, utilization=0.9) -> float:
    """Bytes for the KV cache: ``utilization`` of ``hw.memory`` less the model's
    weights (``shape.params`` values of ``bytes_per_value`` bytes each).
    Activations are left out: a step's are small beside either.
    """
    raise NotImplementedError
